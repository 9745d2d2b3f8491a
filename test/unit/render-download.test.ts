// The source artifact's download over a real loopback HTTP server: a socket the server closes is tried once more
// (a GET is idempotent), a second close is a clear source error naming why, and a refused body is cancelled so its
// socket does not linger for the next request.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadArtifact, type RenderTools } from '../../src/server/diff/render.ts';

const work = mkdtempSync(join(tmpdir(), 'render-download-'));
let server: Server;
let base = '';
let handler: (req: IncomingMessage, res: ServerResponse) => void = (_q, r) => r.writeHead(404).end();
const tools = (): RenderTools => ({
  fluxRender: 'unused',
  kustomize: 'unused',
  workDir: join(work, `cache-${Math.random().toString(36).slice(2)}`),
  maxArtifactBytes: 1024 * 1024,
});

function tarball(): { buf: Buffer; digest: string } {
  const dir = join(work, 'src');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n');
  const tgz = join(work, 'a.tar.gz');
  execFileSync('tar', ['-czf', tgz, '-C', dir, '.']);
  const buf = readFileSync(tgz);
  return { buf, digest: `sha256:${createHash('sha256').update(buf).digest('hex')}` };
}

beforeAll(async () => {
  server = createServer((req, res) => handler(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  process.env.CONSOLE_GIT_ALLOW_HOSTS = new URL(base).host;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
  rmSync(work, { recursive: true, force: true });
});

describe('downloadArtifact', () => {
  it('a socket closed under the first request: tried once more, and the artifact arrives', async () => {
    const { buf, digest } = tarball();
    let requests = 0;
    handler = (req, res) => {
      requests++;
      if (requests === 1) return req.socket.destroy();
      res.writeHead(200, { 'Content-Type': 'application/gzip' }).end(buf);
    };
    const dir = await downloadArtifact(`${base}/a.tar.gz`, digest, tools());
    expect(requests).toBe(2);
    expect(readFileSync(join(dir, 'cm.yaml'), 'utf8')).toContain('kind: ConfigMap');
  });

  it('closed twice: a source error that says the artifact is unreachable and why, after exactly two tries', async () => {
    const { digest } = tarball();
    let requests = 0;
    handler = (req) => {
      requests++;
      req.socket.destroy();
    };
    const err = await downloadArtifact(`${base}/b.tar.gz`, digest, tools()).catch((e: unknown) => e);
    expect(err).toMatchObject({ stage: 'source', message: expect.stringContaining('source artifact unreachable') });
    expect((err as Error).message).toMatch(/ECONNRESET|UND_ERR_SOCKET|other side closed/);
    expect(requests).toBe(2);
  });

  it('an artifact over the limit is refused at its Content-Length and its socket is closed, not left half-read', async () => {
    let closed: (() => void) | undefined;
    const socketClosed = new Promise<void>((r) => (closed = r));
    handler = (req, res) => {
      req.socket.once('close', () => closed?.());
      res.writeHead(200, { 'Content-Length': String(64 * 1024 * 1024) });
      // a body far larger than the socket's buffers: without the client reading or closing, it never ends
      const chunk = Buffer.alloc(1024 * 1024);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pump);
      pump();
    };
    const t = tools();
    const err = await downloadArtifact(`${base}/huge.tar.gz`, undefined, t).catch((e: unknown) => e);
    expect(err).toMatchObject({ stage: 'source', message: expect.stringContaining('over the') });
    const within = await Promise.race([
      socketClosed.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 2_000)),
    ]);
    expect(within).toBe(true);
    expect(existsSync(join(t.workDir, 'artifacts'))).toBe(true);
  });
});
