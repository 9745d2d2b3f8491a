// Desired state, exactly as the controller sees it.
//  Flux: download the source artifact from status.artifact.url, check its digest, render with
//        flux-render (Flux's own github.com/fluxcd/pkg/kustomize: generator, patches, images,
//        postBuild substitution).
//  Argo CD: fetch the app's revision from Git, render kustomize (kustomize CLI) or a plain directory.
// A render that fails or a source that cannot be fetched is an error, never an empty desired state.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { canonicalJson } from '../../domain/evidence.ts';

export type Obj = Record<string, unknown>;

export interface RenderResult {
  objects: Obj[];
  renderer: string;
  revision: string;
  artifactDigest?: string;
  /** sha256 of the canonical JSON of the rendered objects, sorted by kind/namespace/name */
  renderHash: string;
}

export class RenderError extends Error {
  constructor(
    message: string,
    readonly stage: 'source' | 'render' | 'parse',
  ) {
    super(message);
  }
}

export interface RenderTools {
  fluxRender: string;
  kustomize: string;
  /** helm CLI for Argo CD Helm sources (`helm template`), optional */
  helm?: string;
  /** jq-del (gojq) for Argo CD ignoreDifferences.jqPathExpressions, optional */
  jqDel?: string;
  workDir: string;
  maxArtifactBytes?: number;
  maxOutputBytes?: number;
  timeoutMs?: number;
}

const sha256hex = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Rejects URLs the BFF must never fetch: non-http(s), and link-local / cloud metadata addresses. */
export function assertFetchableUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new RenderError(`not a URL: ${raw}`, 'source');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RenderError(`refusing ${u.protocol} URL`, 'source');
  const h = u.hostname.replace(/^\[|\]$/g, '');
  if (/^169\.254\./.test(h) || /^fe80:/i.test(h) || h === 'metadata.google.internal' || h === '100.100.100.200') {
    throw new RenderError(`refusing link-local / metadata address ${h}`, 'source');
  }
  return u;
}

function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; timeoutMs: number; maxBytes: number },
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { cwd: opts.cwd, timeout: opts.timeoutMs, maxBuffer: opts.maxBytes, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) {
          const msg = (stderr || err.message).trim().split('\n').slice(-6).join('\n');
          reject(new RenderError(msg.length > 2000 ? `${msg.slice(0, 2000)}…` : msg, 'render'));
        } else resolve(stdout);
      },
    );
  });
}

/** Nesting deeper than this is not a Kubernetes object; it is an attack on the parser or the diff. */
export const MAX_YAML_DEPTH = 64;

function depthOf(v: unknown, limit: number): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop() as [unknown, number];
    if (d > max) max = d;
    if (max > limit) return max;
    if (x && typeof x === 'object')
      for (const c of Object.values(x)) if (c && typeof c === 'object') stack.push([c, d + 1]);
  }
  return max;
}

/** Parses rendered YAML with limits (size, aliases, depth, count): a billion-laughs document is rejected. */
export function parseRendered(text: string, maxObjects = 20_000): Obj[] {
  if (text.length > 64 * 1024 * 1024) throw new RenderError('rendered output over 64 MiB', 'parse');
  const docs = parseAllDocuments(text);
  const out: Obj[] = [];
  for (const d of docs) {
    if (d.errors.length) throw new RenderError(`invalid YAML: ${d.errors[0]?.message ?? 'parse error'}`, 'parse');
    const v = d.toJS({ maxAliasCount: 100 }) as unknown;
    if (v === null || v === undefined) continue;
    if (depthOf(v, MAX_YAML_DEPTH) > MAX_YAML_DEPTH)
      throw new RenderError(`YAML nested deeper than ${MAX_YAML_DEPTH} levels`, 'parse');
    if (typeof v !== 'object' || Array.isArray(v) || typeof (v as Obj).kind !== 'string')
      throw new RenderError('a rendered document is not a Kubernetes object', 'parse');
    out.push(v as Obj);
    if (out.length > maxObjects) throw new RenderError(`more than ${maxObjects} objects`, 'parse');
  }
  return out;
}

const sortKey = (o: Obj) => {
  const md = (o.metadata ?? {}) as { namespace?: string; name?: string };
  return `${String(o.apiVersion)}/${String(o.kind)}/${md.namespace ?? ''}/${md.name ?? ''}`;
};

export function renderHash(objects: Obj[]): string {
  return `sha256:${sha256hex(canonicalJson([...objects].sort((a, b) => sortKey(a).localeCompare(sortKey(b)))))}`;
}

let versions: Record<string, string> = {};
async function toolVersion(bin: string, args: string[]): Promise<string> {
  const v = versions[bin];
  if (v) return v;
  const out =
    (await run(bin, args, { timeoutMs: 10_000, maxBytes: 1 << 20 }).catch(() => 'unknown')).trim().split('\n')[0] ??
    'unknown';
  versions = { ...versions, [bin]: out };
  return out;
}

/** One download per artifact at a time: parallel renders of one source (dev and staging) share it. */
const inFlight = new Map<string, Promise<string>>();

async function downloadArtifact(url: string, digest: string | undefined, tools: RenderTools): Promise<string> {
  const u = assertFetchableUrl(url);
  const key = digest?.replace(/[^a-z0-9:]/gi, '') ?? sha256hex(url);
  const dir = join(tools.workDir, 'artifacts', key.replace(':', '-'));
  if (existsSync(join(dir, '.complete'))) return dir;
  const flightKey = `${dir}\n${url}`;
  let p = inFlight.get(flightKey);
  if (!p) {
    p = fetchAndExtract(u, key, dir, digest, tools).finally(() => inFlight.delete(flightKey));
    inFlight.set(flightKey, p);
  }
  return p;
}

async function fetchAndExtract(
  u: URL,
  key: string,
  dir: string,
  digest: string | undefined,
  tools: RenderTools,
): Promise<string> {
  let res: Response;
  try {
    res = await fetch(u, { redirect: 'error', signal: AbortSignal.timeout(tools.timeoutMs ?? 30_000) });
  } catch (e) {
    throw new RenderError(
      `source artifact unreachable: ${u.origin}${u.pathname} (${e instanceof Error ? e.message : String(e)})`,
      'source',
    );
  }
  if (!res.ok) throw new RenderError(`source artifact ${u.pathname}: HTTP ${res.status}`, 'source');
  const max = tools.maxArtifactBytes ?? 50 * 1024 * 1024;
  const len = Number(res.headers.get('content-length') ?? 0);
  if (len > max) throw new RenderError(`source artifact is ${len} bytes, over the ${max} limit`, 'source');
  const buf = Buffer.from(await res.arrayBuffer());
  if (buf.length > max) throw new RenderError(`source artifact over the ${max} byte limit`, 'source');
  if (digest) {
    const [algo, want] = digest.split(':');
    if (algo !== 'sha256') throw new RenderError(`unsupported artifact digest ${algo}`, 'source');
    const got = sha256hex(buf);
    if (got !== want)
      throw new RenderError(`artifact digest mismatch: status says sha256:${want}, downloaded sha256:${got}`, 'source');
  }
  // extract next to the final place, then rename: a reader never sees a half-extracted tree
  const tmp = `${dir}.tmp-${process.pid}-${Date.now().toString(36)}`;
  mkdirSync(tmp, { recursive: true });
  const tgz = `${tmp}.tar.gz`;
  try {
    writeFileSync(tgz, buf);
    await run('tar', ['-xzf', tgz, '-C', tmp, '--no-same-owner', '--no-same-permissions'], {
      timeoutMs: 60_000,
      maxBytes: 1 << 20,
    });
    writeFileSync(join(tmp, '.complete'), '');
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } finally {
    rmSync(tgz, { force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** Renders a Flux Kustomization from its source artifact. `ks` must already carry merged ConfigMap vars. */
export async function renderFlux(ks: Obj, source: Obj | undefined, tools: RenderTools): Promise<RenderResult> {
  const artifact = ((source?.status as Obj | undefined)?.artifact ?? {}) as {
    url?: string;
    digest?: string;
    revision?: string;
  };
  if (!source) throw new RenderError('the source object is not found', 'source');
  if (!artifact.url) throw new RenderError('the source has no artifact yet', 'source');
  const root = await downloadArtifact(artifact.url, artifact.digest, tools);
  const work = mkdtempSync(join(tmpdir(), 'flux-render-'));
  try {
    cpSync(root, work, { recursive: true });
    const ksFile = join(work, '.flux-kustomization.json');
    writeFileSync(ksFile, JSON.stringify(ks));
    const path = String((ks.spec as Obj | undefined)?.path ?? './');
    const out = await run(tools.fluxRender, ['--root', work, '--path', path, '--kustomization', ksFile], {
      timeoutMs: tools.timeoutMs ?? 30_000,
      maxBytes: tools.maxOutputBytes ?? 64 * 1024 * 1024,
    });
    const objects = parseRendered(out);
    return {
      objects,
      renderer: await toolVersion(tools.fluxRender, ['--version']),
      revision: artifact.revision ?? '',
      ...(artifact.digest ? { artifactDigest: artifact.digest } : {}),
      renderHash: renderHash(objects),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Renders an Argo CD source at a revision: kustomize when the path has a kustomization, else plain YAML. */
export interface ArgoHelmOptions {
  releaseName?: string;
  valueFiles?: string[];
  parameters?: Array<{ name: string; value: string }>;
  values?: string;
  valuesObject?: unknown;
}

export async function renderArgo(
  repoURL: string,
  revision: string,
  path: string,
  namespace: string | undefined,
  tools: RenderTools,
  helm?: ArgoHelmOptions & { appName?: string },
): Promise<RenderResult> {
  assertFetchableUrl(repoURL);
  const work = mkdtempSync(join(tmpdir(), 'argo-render-'));
  try {
    const opts = { cwd: work, timeoutMs: tools.timeoutMs ?? 60_000, maxBytes: 16 << 20 };
    await run('git', ['init', '-q'], opts);
    await run('git', ['-c', 'protocol.file.allow=never', 'fetch', '-q', '--depth', '1', repoURL, revision], opts).catch(
      (e: RenderError) => {
        throw new RenderError(`git fetch ${revision} failed: ${e.message}`, 'source');
      },
    );
    await run('git', ['checkout', '-q', 'FETCH_HEAD'], opts);
    const sha = (await run('git', ['rev-parse', 'HEAD'], opts)).trim();
    const dir = join(work, path);
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new RenderError(`path ${path} not found at ${sha.slice(0, 7)}`, 'render');
    const files = readdirSync(dir);
    let text: string;
    let renderer: string;
    if (files.includes('Chart.yaml')) {
      if (!tools.helm)
        throw new RenderError(
          'this Application is a Helm chart and no helm binary is configured (CONSOLE_HELM)',
          'render',
        );
      const args = [
        'template',
        helm?.releaseName ?? helm?.appName ?? 'release',
        dir,
        ...(namespace ? ['--namespace', namespace] : []),
      ];
      for (const f of helm?.valueFiles ?? []) args.push('--values', join(dir, f));
      if (helm?.values || helm?.valuesObject !== undefined) {
        const vf = join(work, '.argo-values.yaml');
        writeFileSync(vf, helm.valuesObject !== undefined ? JSON.stringify(helm.valuesObject) : (helm.values ?? ''));
        args.push('--values', vf);
      }
      for (const p of helm?.parameters ?? []) args.push('--set', `${p.name}=${p.value}`);
      text = await run(tools.helm, args, {
        timeoutMs: tools.timeoutMs ?? 30_000,
        maxBytes: tools.maxOutputBytes ?? 64 << 20,
      });
      renderer = `helm ${await toolVersion(tools.helm, ['version', '--short'])}`;
    } else if (files.some((f) => /^kustomization\.ya?ml$|^Kustomization$/.test(f))) {
      text = await run(tools.kustomize, ['build', dir], {
        timeoutMs: tools.timeoutMs ?? 30_000,
        maxBytes: tools.maxOutputBytes ?? 64 << 20,
      });
      renderer = `kustomize ${await toolVersion(tools.kustomize, ['version'])}`;
    } else {
      text = files
        .filter((f) => /\.(ya?ml|json)$/.test(f))
        .sort()
        .map((f) => readFileSync(join(dir, f), 'utf8'))
        .join('\n---\n');
      renderer = 'directory (plain YAML)';
    }
    const objects = parseRendered(text).map((o) => {
      const md = (o.metadata ?? {}) as Obj;
      if (
        namespace &&
        md.namespace === undefined &&
        o.kind !== 'Namespace' &&
        o.kind !== 'CustomResourceDefinition' &&
        !String(o.kind).startsWith('Cluster')
      ) {
        return { ...o, metadata: { ...md, namespace } };
      }
      return o;
    });
    return { objects, renderer, revision: sha, renderHash: renderHash(objects) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
