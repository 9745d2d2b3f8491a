// flux-render in server mode (sandbox/go/flux-render/serve.go): a few long-lived processes that render request after
// request, so kustomize's built-in OpenAPI schema is parsed once per process instead of once per render. A one-shot
// render of the seed's dev overlay costs 0.30–0.36 core-seconds, half of it that parse and most of the rest the
// garbage collector over it; a render in a running server about 0.04 (docs/develop/testing.md, "Renders"). The output is the
// one-shot command's, byte for byte (src/server/diff/render-server.test.ts).
//
// Each process renders one request at a time; up to `size` processes run at once, and a request that finds them all
// busy is rendered by the caller's one-shot command instead of waiting (no render waits on another's).
// A process that dies, answers out of protocol or passes its deadline is killed; its request fails (renderFlux makes
// that a RenderError of the render) and the next one starts a new process. Idle processes do not keep Node running (unref'd).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { availableParallelism } from 'node:os';

export interface RenderRequest {
  root: string;
  path: string;
  /** the Kustomization object's file */
  kustomization: string;
}

/** A render that failed: the renderer's own message (its last lines), or why the process ended. */
export class RenderServerError extends Error {}

interface Pending {
  resolve(out: string): void;
  reject(e: Error): void;
  maxBytes: number;
}

/** The last lines of a failure, at most 2,000 characters: what a one-shot render's error showed of its stderr. */
export function errorTail(text: string): string {
  const msg = text.trim().split('\n').slice(-6).join('\n');
  return msg.length > 2000 ? `${msg.slice(0, 2000)}…` : msg;
}

class ServeProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private buf: Buffer = Buffer.alloc(0);
  private stderr = '';
  private pending: Pending | undefined;
  private timer: NodeJS.Timeout | undefined;
  dead = false;

  constructor(bin: string) {
    this.child = spawn(bin, ['--serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (d: Buffer) => this.onData(d));
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString('utf8')).slice(-8000);
    });
    this.child.on('error', (e) => this.fail(new RenderServerError(errorTail(e.message))));
    this.child.on('exit', (code, signal) =>
      this.fail(new RenderServerError(errorTail(this.stderr || `flux-render exited (${signal ?? code})`))),
    );
    this.child.stdin.on('error', () => undefined);
    this.idle(true);
  }

  /** Idle: Node may exit with this process running (its stdin closes then, and it ends). */
  private idle(yes: boolean) {
    const streams = [this.child.stdin, this.child.stdout, this.child.stderr] as unknown as Array<{
      ref?: () => void;
      unref?: () => void;
    }>;
    if (yes) {
      this.child.unref();
      for (const s of streams) s.unref?.();
    } else {
      this.child.ref();
      for (const s of streams) s.ref?.();
    }
  }

  render(req: RenderRequest, timeoutMs: number, maxBytes: number): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.dead) return reject(new RenderServerError('flux-render is not running'));
      this.pending = { resolve, reject, maxBytes };
      this.idle(false);
      this.timer = setTimeout(() => {
        this.fail(new RenderServerError(`flux-render did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.child.stdin.write(`${JSON.stringify(req)}\n`);
    });
  }

  private onData(d: Buffer) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    const p = this.pending;
    if (!p) return this.fail(new RenderServerError('flux-render answered without a request'));
    const nl = this.buf.indexOf(10);
    if (nl < 0) return;
    let head: { bytes?: number; error?: string };
    try {
      head = JSON.parse(this.buf.subarray(0, nl).toString('utf8')) as typeof head;
    } catch {
      return this.fail(new RenderServerError('flux-render answered out of protocol'));
    }
    if (head.error !== undefined) {
      this.buf = this.buf.subarray(nl + 1);
      return this.settle(() => p.reject(new RenderServerError(errorTail(head.error ?? ''))));
    }
    const n = Number(head.bytes);
    if (!Number.isInteger(n) || n < 0) return this.fail(new RenderServerError('flux-render answered out of protocol'));
    if (n > p.maxBytes) return this.fail(new RenderServerError(`the render's output exceeds ${p.maxBytes} bytes`));
    if (this.buf.length < nl + 1 + n) return;
    const body = this.buf.subarray(nl + 1, nl + 1 + n).toString('utf8');
    this.buf = this.buf.subarray(nl + 1 + n);
    this.settle(() => p.resolve(body));
  }

  private settle(done: () => void) {
    clearTimeout(this.timer);
    this.pending = undefined;
    if (this.buf.length) return this.fail(new RenderServerError('flux-render answered out of protocol'));
    this.idle(true);
    done();
  }

  /** Ends this process: its pending request fails with `e`. */
  fail(e: Error) {
    clearTimeout(this.timer);
    const p = this.pending;
    this.pending = undefined;
    if (!this.dead) {
      this.dead = true;
      this.idle(true);
      if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    }
    p?.reject(e);
  }
}

/** What a pool has done: renders through its processes, renders it handed back (all busy), slow ones. */
export interface RenderServerStats {
  served: number;
  overflow: number;
  slow: number;
}

export class RenderServerPool {
  private readonly free: ServeProcess[] = [];
  private running = 0;
  readonly stats: RenderServerStats = { served: 0, overflow: 0, slow: 0 };

  constructor(
    private readonly bin: string,
    private readonly size = Math.max(1, Math.min(4, availableParallelism())),
    /** told of a render that took longer than `slowMs` (its request and milliseconds) */
    private readonly onSlow: (req: RenderRequest, ms: number) => void = defaultOnSlow,
    private readonly slowMs = 5_000,
  ) {}

  /**
   * Renders through a free process; when all `size` are busy, `overflow` renders instead (the one-shot command), so
   * no render ever waits on another: a render's worst case is the one-shot's.
   */
  async render(
    req: RenderRequest,
    opts: { timeoutMs: number; maxBytes: number },
    overflow: () => Promise<string>,
  ): Promise<string> {
    if (this.running >= this.size) {
      this.stats.overflow++;
      return overflow();
    }
    this.running++;
    let proc = this.free.pop();
    while (proc?.dead) proc = this.free.pop();
    proc ??= new ServeProcess(this.bin);
    const t0 = performance.now();
    try {
      return await proc.render(req, opts.timeoutMs, opts.maxBytes);
    } finally {
      const ms = performance.now() - t0;
      this.stats.served++;
      if (ms > this.slowMs) {
        this.stats.slow++;
        this.onSlow(req, ms);
      }
      if (!proc.dead) this.free.push(proc);
      this.running--;
    }
  }

  /** Ends every idle process (a console's close). */
  close() {
    for (const p of this.free.splice(0)) p.fail(new RenderServerError('closed'));
  }
}

function defaultOnSlow(req: RenderRequest, ms: number) {
  // a path and a duration only: never the tree's contents
  process.stderr.write(`flux-render --serve: a render of ${req.path} took ${Math.round(ms)} ms\n`);
}

const pools = new Map<string, RenderServerPool>();

/** The process-wide pool for a flux-render binary. */
export function renderServerPool(bin: string): RenderServerPool {
  let p = pools.get(bin);
  if (!p) pools.set(bin, (p = new RenderServerPool(bin)));
  return p;
}
