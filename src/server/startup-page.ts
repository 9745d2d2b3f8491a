// `npm start` on a fresh machine compiles the sandbox first (a real control plane from Go modules, once).
// Meanwhile the console's address already answers: this small server shows the build's progress in the
// browser (component, done/total, elapsed, an estimate) and says what is built and why; when the sandbox is
// up it closes, the console listens on the same address, and the page reloads into the sign-in / overview.
// Everything but the page, its script and /api/startup answers 503 with Retry-After.
import { createServer, type Server } from 'node:http';
import type { BuildSnapshot } from '../../sandbox/build-progress.ts';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Starting — GitOps console</title>
<style>
  :root { color-scheme: light dark; --fg: #0f172a; --bg: #f8fafc; --muted: #475569; --bar: #0f766e; --card: #fff; --line: #cbd5e1; }
  @media (prefers-color-scheme: dark) { :root { --fg: #e2e8f0; --bg: #0f172a; --muted: #cbd5e1; --bar: #2dd4bf; --card: #1e293b; --line: #475569; } }
  body { font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0; }
  main { max-width: 44rem; margin: 3rem auto; padding: 0 1rem; }
  .card { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: 1rem 1.25rem; }
  progress { width: 100%; height: 1rem; accent-color: var(--bar); }
  p.muted, li { color: var(--muted); }
  ul { columns: 2; padding-left: 1.25rem; }
  .err { color: #b91c1c; font-weight: 600; }
</style>
</head>
<body>
<main>
  <h1>Starting the GitOps console</h1>
  <div class="card">
    <p>No kubeconfig was given, so the console runs on its own <strong>sandbox</strong>: two real Kubernetes
    control planes (kube-apiserver and etcd), the Flux controllers, a Git server, a Gitea forge and an OCI
    registry, all on this machine's loopback. They are <strong>compiled from their Go modules once</strong>
    and cached (<code>~/.cache/gitops-console/sandbox</code>); later starts skip this and take about two minutes.</p>
    <label for="bar">Progress</label>
    <progress id="bar" max="1" value="0"></progress>
    <p id="status" role="status" aria-live="polite">Checking the build cache…</p>
    <p id="error" class="err" role="alert" hidden></p>
    <h2>Components</h2>
    <ul id="list"></ul>
    <p class="muted">This page turns into the console by itself when the clusters are up.</p>
  </div>
</main>
<script src="/startup.js"></script>
</body>
</html>`;

const SCRIPT = `(function () {
  var mins = function (s) { return s >= 60 ? Math.floor(s / 60) + ' min ' + (s % 60) + ' s' : s + ' s'; };
  var approx = function (s) { return s >= 60 ? Math.round(s / 60) + ' min' : s + ' s'; };
  var words = { pending: 'waiting', building: 'compiling now', built: 'built', cached: 'cached' };
  function show(p) {
    var bar = document.getElementById('bar');
    bar.max = Math.max(1, p.total + 1);
    bar.value = p.done + (p.phase === 'ready' ? 1 : 0);
    var what = p.phase === 'building' ? (p.current ? 'Compiling ' + p.current : 'Checking the build cache')
      : p.phase === 'starting' ? 'Starting the clusters, Git, forge and registry'
      : p.phase === 'failed' ? 'The sandbox could not start' : 'Ready';
    document.getElementById('status').textContent = what + ' — ' + p.done + ' of ' + p.total + ' components ready · '
      + mins(p.elapsedS) + ' elapsed' + (p.estimateLeftS ? ' · about ' + approx(p.estimateLeftS) + ' left' : '');
    var list = document.getElementById('list');
    list.textContent = '';
    p.components.forEach(function (c) {
      var li = document.createElement('li');
      li.textContent = c.name + ': ' + words[c.state] + (c.seconds !== undefined ? ' in ' + mins(c.seconds) : '');
      list.appendChild(li);
    });
    var err = document.getElementById('error');
    err.hidden = !p.error;
    err.textContent = p.error ? p.error + ' (see the terminal)' : '';
  }
  function poll() {
    fetch('/api/startup', { cache: 'no-store' }).then(function (r) {
      if (!r.ok) throw new Error('not the start-up server');
      return r.json();
    }).then(function (p) {
      if (!p || !p.startup) throw new Error('the console is up');
      show(p.startup);
      setTimeout(poll, 1500);
    }).catch(function () { setTimeout(waitForConsole, 1000); });
  }
  // between this server closing and the console listening there is a gap: reload only when the console answers
  function waitForConsole() {
    fetch('/', { cache: 'no-store' }).then(function (r) {
      if (r.ok) location.reload();
      else setTimeout(poll, 1000);
    }).catch(function () { setTimeout(waitForConsole, 1000); });
  }
  poll();
})();`;

export interface StartupServer {
  close(): Promise<void>;
}

export function startStartupServer(host: string, port: number, progress: () => BuildSnapshot): Promise<StartupServer> {
  const server: Server = createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    const headers = {
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'",
    };
    if (req.method === 'GET' && url === '/api/startup') {
      res.writeHead(200, { ...headers, 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ startup: progress() }));
    } else if (req.method === 'GET' && url === '/startup.js') {
      res.writeHead(200, { ...headers, 'Content-Type': 'text/javascript; charset=utf-8' });
      res.end(SCRIPT);
    } else if (req.method === 'GET' && (req.headers.accept ?? '').includes('text/html')) {
      res.writeHead(200, { ...headers, 'Content-Type': 'text/html; charset=utf-8' });
      res.end(PAGE);
    } else {
      res.writeHead(503, { ...headers, 'Content-Type': 'application/json', 'Retry-After': '5' });
      res.end(
        JSON.stringify({ error: { code: 'Starting', message: 'the console is starting (building the sandbox)' } }),
      );
    }
  });
  // connections must not keep the port after close: the console listens on it next
  server.keepAliveTimeout = 1000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () =>
      resolve({
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      }),
    );
  });
}
