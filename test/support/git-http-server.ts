// A Git server on 127.0.0.1 for tests: git's own smart HTTP (`git http-backend` as a CGI) over bare repositories
// in a directory, clone, fetch and push (anonymous pushes allowed), that a test can make slow or broken: `stall`
// accepts a request and holds it without a byte of answer (for `stallMs`, 100 s by default, then answers it; or
// until release()), `refuse` answers 503. `only` limits the mode to pushes or fetches (the others are served).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export type GitServerMode = 'serve' | 'stall' | 'refuse';

export interface GitHttpServer {
  /** the directory of the bare repositories (`<name>.git`) */
  readonly root: string;
  /** http://127.0.0.1:<port>/<name>.git */
  url(name: string): string;
  mode: GitServerMode;
  /** which requests the mode applies to; the others are served */
  only: 'push' | 'fetch' | 'all';
  /** how long a stalled request is held before it is answered */
  stallMs: number;
  /** every request, in order, with whether it was held */
  readonly requests: Array<{ at: number; method: string; path: string; push: boolean; held: boolean }>;
  /** requests being held now */
  readonly holding: number;
  /** answers every held request now (served) */
  release(): void;
  /** drops every held request (the connection closed without an answer) */
  drop(): void;
  /** a bare repository `<name>.git` with one commit on main holding `files` */
  createRepo(name: string, files: Record<string, string>): string;
  /** a file at a ref of a repository (git show) */
  show(name: string, ref: string, path: string): string;
  /** the branches of a repository */
  branches(name: string): string[];
  close(): Promise<void>;
}

const isPush = (req: IncomingMessage) => /git-receive-pack/.test(req.url ?? '');

export async function startGitHttpServer(opts: { stallMs?: number } = {}): Promise<GitHttpServer> {
  const root = mkdtempSync(join(tmpdir(), 'git-http-'));
  const held = new Set<{ release(): void; drop(): void }>();
  const sockets = new Set<Socket>();

  const serve = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        // an authenticated user: http-backend then takes pushes
        REMOTE_USER: 'test',
        REMOTE_ADDR: '127.0.0.1',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(u.pathname),
        QUERY_STRING: u.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        CONTENT_LENGTH: String(body.length),
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
    });
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stdin.on('error', () => undefined);
    child.stdin.end(body);
    child.on('close', () => {
      if (res.writableEnded || res.destroyed) return;
      const all = Buffer.concat(out);
      let split = all.indexOf('\r\n\r\n');
      let sep = 4;
      if (split < 0) {
        split = all.indexOf('\n\n');
        sep = 2;
      }
      if (split < 0) {
        res.writeHead(500).end('http-backend gave no headers');
        return;
      }
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of all.subarray(0, split).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = Number(v.split(' ')[0]) || 200;
        else headers[k] = v;
      }
      res.writeHead(status, headers).end(all.subarray(split + sep));
    });
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const applies = s.only === 'all' || (s.only === 'push') === isPush(req);
      const mode = applies ? s.mode : 'serve';
      s.requests.push({
        at: Date.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        push: isPush(req),
        held: mode === 'stall',
      });
      if (mode === 'refuse') return void res.writeHead(503, { 'content-type': 'text/plain' }).end('unavailable\n');
      if (mode === 'serve') return serve(req, res, body);
      // accepted, and not a byte of answer until the stall ends
      const h = {
        release: () => {
          clearTimeout(timer);
          held.delete(h);
          serve(req, res, body);
        },
        drop: () => {
          clearTimeout(timer);
          held.delete(h);
          res.destroy();
          req.socket.destroy();
        },
      };
      const timer = setTimeout(h.release, s.stallMs);
      held.add(h);
      res.on('close', () => {
        clearTimeout(timer);
        held.delete(h);
      });
    });
  });
  server.on('connection', (c) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const git = (args: string[], cwd?: string) =>
    execFileSync('git', args, {
      cwd,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'test',
        GIT_AUTHOR_EMAIL: 'test@example.com',
        GIT_COMMITTER_NAME: 'test',
        GIT_COMMITTER_EMAIL: 'test@example.com',
        GIT_CONFIG_NOSYSTEM: '1',
      },
    });

  const s: GitHttpServer = {
    root,
    url: (name) => `http://127.0.0.1:${port}/${name}.git`,
    mode: 'serve',
    only: 'all',
    stallMs: opts.stallMs ?? 100_000,
    requests: [],
    get holding() {
      return held.size;
    },
    release() {
      for (const h of [...held]) h.release();
    },
    drop() {
      for (const h of [...held]) h.drop();
    },
    createRepo(name, files) {
      const bare = join(root, `${name}.git`);
      git(['init', '-q', '--bare', '-b', 'main', bare]);
      const work = mkdtempSync(join(tmpdir(), 'git-http-work-'));
      try {
        git(['init', '-q', '-b', 'main', work]);
        for (const [path, content] of Object.entries(files)) {
          mkdirSync(dirname(join(work, path)), { recursive: true });
          writeFileSync(join(work, path), content);
        }
        git(['add', '-A'], work);
        git(['commit', '-q', '-m', 'initial'], work);
        git(['push', '-q', bare, 'main'], work);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
      return bare;
    },
    show: (name, ref, path) => git(['--git-dir', join(root, `${name}.git`), 'show', `${ref}:${path}`]),
    branches: (name) =>
      git(['--git-dir', join(root, `${name}.git`), 'for-each-ref', '--format=%(refname:short)', 'refs/heads'])
        .split('\n')
        .filter(Boolean),
    async close() {
      s.drop();
      for (const c of sockets) c.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(root, { recursive: true, force: true });
    },
  };
  return s;
}
