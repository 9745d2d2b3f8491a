import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { precompress } from './scripts/precompress.ts';

/** .br and .gz beside every text asset, once the bundle is written (served by negotiation: src/server/http/static-assets.ts). */
function precompressed(): Plugin {
  return {
    name: 'gitops-console-precompress',
    apply: 'build',
    closeBundle() {
      precompress('dist/web');
    },
  };
}

export default defineConfig({
  root: '.',
  plugins: [react(), tailwindcss(), precompressed()],
  build: { outDir: 'dist/web', emptyOutDir: true, chunkSizeWarningLimit: 4000 },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': 'http://127.0.0.1:8080', '/healthz': 'http://127.0.0.1:8080', '/readyz': 'http://127.0.0.1:8080' },
  },
});
