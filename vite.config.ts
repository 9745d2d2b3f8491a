import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: '.',
  plugins: [react(), tailwindcss()],
  build: { outDir: 'dist/web', emptyOutDir: true, chunkSizeWarningLimit: 4000 },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': 'http://127.0.0.1:8080', '/healthz': 'http://127.0.0.1:8080', '/readyz': 'http://127.0.0.1:8080' },
  },
});
