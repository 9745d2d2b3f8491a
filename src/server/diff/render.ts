// Desired state, exactly as the controller sees it.
//  Flux: download the source artifact from status.artifact.url, check its digest, render with
//        flux-render (Flux's own github.com/fluxcd/pkg/kustomize: generator, patches, images,
//        postBuild substitution).
//  Argo CD: fetch the app's revision from Git, render kustomize (kustomize CLI) or a plain directory.
// A render that fails or a source that cannot be fetched is an error, never an empty desired state.
// It is over 500 lines: both controllers' renderers share one tool runner, one Secret masking and one error type here.
import { kustomizeEdits, unsupportedKustomizeOptions, type ArgoKustomizeOptions } from './argo-kustomize.ts';
import { checkoutTree } from './argo-tree.ts';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
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
import { forEachYamlFile, readInTree, renderedSecretsInGit, secretsInGitTree } from './secrets-in-git.ts';
import type { SecretInGit } from '../../domain/secrets-in-git.ts';
import { maskSecrets, maskSecretsInText } from '../kube/secret-mask.ts';
import { GitRunError, runGit } from '../git/run.ts';
import { checkUrl, checkUrlSync, UnfetchableUrlError } from '../git/url-policy.ts';
import { localDiskError } from '../http/errors.ts';
import { fetchErrorText, socketClosed } from '../http/fetch-failure.ts';
import { errorTail, renderServerPool, RenderServerError } from './render-server.ts';

export type Obj = Record<string, unknown>;

export interface RenderResult {
  objects: Obj[];
  renderer: string;
  revision: string;
  artifactDigest?: string;
  /**
   * sha256 of the canonical JSON of the rendered objects with Secret values masked (keyed HMAC, see
   * secret-mask.ts), sorted by kind/namespace/name: equal renders, equal hashes (for one mask key), and
   * no offline guessing of a Secret value from it.
   */
  renderHash: string;
  /** the render's Secrets and where Git holds them: file, keys, SOPS or plaintext (never values) */
  secretsInGit?: SecretInGit[];
}

export class RenderError extends Error {
  constructor(
    message: string,
    readonly stage: 'source' | 'render' | 'parse',
    /** the console's own disk failed (a full disk, a file-size limit, a read-only or failing volume): its code */
    readonly localIo?: string,
  ) {
    super(message);
  }
}

/** The local disk's error code in `e` (kept on a RenderError), or undefined. */
export function localIoError(e: unknown): string | undefined {
  return e instanceof RenderError ? e.localIo : localDiskError(e);
}

export interface RenderTools {
  fluxRender: string;
  /** render through running `flux-render --serve` processes (render-server.ts) instead of one process a render */
  fluxRenderServer?: boolean;
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

/**
 * Rejects URLs the BFF must not fetch, by the one URL policy (src/server/git/url-policy.ts) without a lookup:
 * a Flux artifact URL (`http`) or an Argo CD repository (`git`). A RenderError of the source.
 */
export function assertFetchableUrl(raw: string, use: 'git' | 'http' = 'http'): URL {
  try {
    return new URL(checkUrlSync(raw, use).href);
  } catch (e) {
    throw sourceError(e);
  }
}

const sourceError = (e: unknown) => (e instanceof UnfetchableUrlError ? new RenderError(e.message, 'source') : e);

/** git through the one runner (src/server/git/run.ts); a failure is a RenderError with git's last lines. */
function gitRun(
  args: string[],
  opts: { cwd?: string; timeoutMs: number; maxBytes: number; remote?: string },
): Promise<string> {
  return runGit(args, opts).catch((e: unknown) => {
    if (!(e instanceof GitRunError)) throw sourceError(e);
    const msg = e.timedOut ? e.message : e.stderr.trim().split('\n').slice(-6).join('\n');
    throw new RenderError(msg.length > 2000 ? `${msg.slice(0, 2000)}…` : msg, 'render');
  });
}

export function run(
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
          reject(new RenderError(errorTail(stderr || err.message), 'render'));
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

/**
 * The masked render as the bytes its hash is taken over: Secret values masked, objects in a fixed order, canonical
 * JSON. What the release recorder stores per render (store/manifest-store.ts), so the stored bytes prove
 * themselves against the render hash in the chain.
 */
export function renderCanonical(objects: Obj[]): string {
  const masked = objects.map((o) => maskSecrets(o));
  return canonicalJson(masked.sort((a, b) => sortKey(a).localeCompare(sortKey(b))));
}

export function renderHash(objects: Obj[]): string {
  return `sha256:${sha256hex(renderCanonical(objects))}`;
}

// The render cache holds checked-out Git content, which may include Secrets committed in plain text:
// every directory and file in it is owner-only, whatever the process umask (main() also sets 077).
function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Directories 0700, files 0600, symlinks neither followed nor changed. */
function makePrivate(root: string): void {
  const stack = [root];
  while (stack.length) {
    const p = stack.pop() as string;
    const st = lstatSync(p);
    if (st.isSymbolicLink()) continue;
    if (st.isDirectory()) {
      chmodSync(p, 0o700);
      for (const e of readdirSync(p)) stack.push(join(p, e));
    } else chmodSync(p, 0o600);
  }
}

const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** Secrets in YAML text, leniently: a document that does not parse is skipped, the others still count. */
export function secretsInYaml(text: string, file?: { path: string; root: string }): Obj[] {
  const out: Obj[] = [];
  let docs: ReturnType<typeof parseAllDocuments>;
  try {
    docs = parseAllDocuments(text);
  } catch {
    return out;
  }
  for (const d of Array.isArray(docs) ? docs : [docs]) {
    let v: unknown;
    try {
      v = d.toJS({ maxAliasCount: 100 }) as unknown;
    } catch {
      continue;
    }
    if (!isObj(v)) continue;
    if (v.kind === 'Secret' || v.kind === 'List') out.push(v);
    if (file && Array.isArray(v.secretGenerator)) out.push(...generatedSecrets(v.secretGenerator, file));
  }
  return out;
}

/** kustomize secretGenerator entries as Secrets: literals, env files and files (read only inside the tree). */
function generatedSecrets(gens: unknown[], file: { path: string; root: string }): Obj[] {
  const read = (p: string) => readInTree(file.root, file.path, p);
  const strs = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return gens.filter(isObj).map((g) => {
    const values: string[] = strs(g.literals).map((l) => l.slice(l.indexOf('=') + 1));
    for (const env of [...strs(g.envs), ...(typeof g.env === 'string' ? [g.env] : [])])
      for (const line of (read(env) ?? '').split('\n'))
        if (line.includes('=') && !line.trimStart().startsWith('#')) values.push(line.slice(line.indexOf('=') + 1));
    for (const f of strs(g.files)) {
      const content = read(f.slice(f.indexOf('=') + 1));
      if (content !== undefined) values.push(content);
    }
    return { kind: 'Secret', stringData: Object.fromEntries(values.map((v, i) => [String(i), v])) };
  });
}

/** Secrets committed in a source tree (secrets-in-git.ts forEachYamlFile): what a render error may quote. */
function secretsInTree(root: string): Obj[] {
  const out: Obj[] = [];
  forEachYamlFile(root, (path, text) => out.push(...secretsInYaml(text, { path, root })));
  return out;
}

/**
 * The error the user sees: Secret values masked. `known` lists the Secrets whose values are known at
 * that point (those in the source tree, those in the renderer's output); what is not known is masked by
 * shape (values under data:/stringData: in quoted YAML or JSON, URL credentials), see maskSecretsInText.
 */
export function maskedRenderError(e: unknown, known: () => Obj[]): RenderError {
  const stage = e instanceof RenderError ? e.stage : 'render';
  let objects: Obj[] = [];
  try {
    objects = known();
  } catch {
    /* mask by shape only */
  }
  return new RenderError(
    maskSecretsInText(e instanceof Error ? e.message : String(e), objects),
    stage,
    localIoError(e),
  );
}

let versions: Record<string, string> = {};
export async function toolVersion(bin: string, args: string[]): Promise<string> {
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

export async function downloadArtifact(url: string, digest: string | undefined, tools: RenderTools): Promise<string> {
  assertFetchableUrl(url);
  const key = digest?.replace(/[^a-z0-9:]/gi, '') ?? sha256hex(url);
  privateDir(tools.workDir);
  privateDir(join(tools.workDir, 'artifacts'));
  const dir = join(tools.workDir, 'artifacts', key.replace(':', '-'));
  if (existsSync(join(dir, '.complete'))) return dir;
  const flightKey = `${dir}\n${url}`;
  let p = inFlight.get(flightKey);
  if (!p) {
    // the whole policy, the host resolved, before the download connects
    p = checkUrl(url, 'http')
      .then(
        (c) => fetchAndExtract(new URL(c.href), key, dir, digest, tools),
        (e: unknown) => Promise.reject(sourceError(e)),
      )
      .finally(() => inFlight.delete(flightKey));
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
  const signal = AbortSignal.timeout(tools.timeoutMs ?? 30_000);
  const get = () => fetch(u, { redirect: 'error', signal });
  try {
    // a GET is idempotent: a kept-alive socket the server closed as the request went out is tried once more
    res = await get().catch((e: unknown) => {
      if (socketClosed(e)) return get();
      throw e;
    });
  } catch (e) {
    throw new RenderError(`source artifact unreachable: ${u.origin}${u.pathname} (${fetchErrorText(e)})`, 'source');
  }
  // a refused body is cancelled: its socket is closed now, not left half-read for the next request to meet
  const refuse = (message: string) => {
    void res.body?.cancel().catch(() => undefined);
    return new RenderError(message, 'source');
  };
  if (!res.ok) throw refuse(`source artifact ${u.pathname}: HTTP ${res.status}`);
  const max = tools.maxArtifactBytes ?? 50 * 1024 * 1024;
  const len = Number(res.headers.get('content-length') ?? 0);
  if (len > max) throw refuse(`source artifact is ${len} bytes, over the ${max} limit`);
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
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  const tgz = `${tmp}.tar.gz`;
  try {
    writeFileSync(tgz, buf, { mode: 0o600 });
    await run('tar', ['-xzf', tgz, '-C', tmp, '--no-same-owner', '--no-same-permissions'], {
      timeoutMs: 60_000,
      maxBytes: 1 << 20,
    });
    makePrivate(tmp);
    writeFileSync(join(tmp, '.complete'), '', { mode: 0o600 });
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
  let root: string | undefined;
  let out: string | undefined;
  let work: string | undefined;
  try {
    root = await downloadArtifact(artifact.url, artifact.digest, tools);
    work = mkdtempSync(join(tmpdir(), 'flux-render-'));
    cpSync(root, work, { recursive: true });
    const ksFile = join(work, '.flux-kustomization.json');
    writeFileSync(ksFile, JSON.stringify(ks), { mode: 0o600 });
    const path = String((ks.spec as Obj | undefined)?.path ?? './');
    const limits = { timeoutMs: tools.timeoutMs ?? 30_000, maxBytes: tools.maxOutputBytes ?? 64 * 1024 * 1024 };
    // by default a running flux-render renders it (render-server.ts): the one-shot command's output without its schema
    // parse; the one-shot command when every running one is busy, or when CONSOLE_FLUX_RENDER_SERVER=off
    const tree = work;
    const oneShot = () => run(tools.fluxRender, ['--root', tree, '--path', path, '--kustomization', ksFile], limits);
    out = tools.fluxRenderServer
      ? await renderServerPool(tools.fluxRender)
          .render({ root: tree, path, kustomization: ksFile }, limits, oneShot)
          .catch((e: unknown) => {
            throw e instanceof RenderServerError ? new RenderError(e.message, 'render') : e;
          })
      : await oneShot();
    const objects = parseRendered(out);
    return {
      objects,
      renderer: await toolVersion(tools.fluxRender, ['--version']),
      revision: artifact.revision ?? '',
      ...(artifact.digest ? { artifactDigest: artifact.digest } : {}),
      renderHash: renderHash(objects),
      secretsInGit: renderedSecretsInGit(objects, secretsInGitTree(work)),
    };
  } catch (e) {
    const [tree, output] = [root, out];
    throw maskedRenderError(e, () => [...(tree ? secretsInTree(tree) : []), ...(output ? secretsInYaml(output) : [])]);
  } finally {
    if (work) rmSync(work, { recursive: true, force: true });
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
  helm?: ArgoHelmOptions & { appName?: string; kustomize?: ArgoKustomizeOptions },
): Promise<RenderResult> {
  try {
    assertFetchableUrl(repoURL, 'git');
  } catch (e) {
    throw maskedRenderError(e, () => []);
  }
  const work = mkdtempSync(join(tmpdir(), 'argo-render-'));
  let rendered: string | undefined;
  try {
    const fetchInto = async (cwd: string) => {
      const opts = { cwd, timeoutMs: tools.timeoutMs ?? 60_000, maxBytes: 16 << 20 };
      await gitRun(['init', '-q'], opts);
      await gitRun(['fetch', '-q', '--depth', '1', repoURL, revision], { ...opts, remote: repoURL }).catch(
        (e: RenderError) => {
          throw new RenderError(`git fetch ${revision} failed: ${e.message}`, 'source');
        },
      );
      await gitRun(['checkout', '-q', 'FETCH_HEAD'], opts);
      return (await gitRun(['rev-parse', 'HEAD'], opts)).trim();
    };
    // a commit id's tree is fetched once (argo-tree.ts); a branch or tag every time
    privateDir(join(tools.workDir, 'argo-trees'));
    const sha = await checkoutTree(repoURL, revision, work, join(tools.workDir, 'argo-trees'), fetchInto);
    makePrivate(work);
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
        writeFileSync(vf, helm.valuesObject !== undefined ? JSON.stringify(helm.valuesObject) : (helm.values ?? ''), {
          mode: 0o600,
        });
        args.push('--values', vf);
      }
      for (const p of helm?.parameters ?? []) args.push('--set', `${p.name}=${p.value}`);
      text = await run(tools.helm, args, {
        timeoutMs: tools.timeoutMs ?? 30_000,
        maxBytes: tools.maxOutputBytes ?? 64 << 20,
      });
      renderer = `helm ${await toolVersion(tools.helm, ['version', '--short'])}`;
    } else if (files.some((f) => /^kustomization\.ya?ml$|^Kustomization$/.test(f))) {
      // the Application's kustomize options, as Argo CD applies them (kustomize edit in the checked-out path)
      const unsupported = unsupportedKustomizeOptions(helm?.kustomize ?? {});
      if (unsupported.length)
        throw new RenderError(
          `the console does not apply the Argo CD kustomize option(s) ${unsupported.join(', ')}`,
          'render',
        );
      for (const args of kustomizeEdits(helm?.kustomize ?? {}))
        await run(tools.kustomize, args, { cwd: dir, timeoutMs: tools.timeoutMs ?? 30_000, maxBytes: 1 << 20 });
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
    rendered = text;
    const objects = withDefaultNamespace(parseRendered(text), namespace);
    return {
      objects,
      renderer,
      revision: sha,
      renderHash: renderHash(objects),
      secretsInGit: renderedSecretsInGit(objects, secretsInGitTree(work)),
    };
  } catch (e) {
    const output = rendered;
    throw maskedRenderError(e, () => [...secretsInTree(work), ...(output ? secretsInYaml(output) : [])]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The namespace the controller applies a namespaced object into when the render leaves it out (Argo CD's
 * destination, Helm's release namespace); cluster-scoped kinds by name (Namespace, CRDs, Cluster*).
 */
export function withDefaultNamespace(objects: Obj[], namespace: string | undefined): Obj[] {
  return objects.map((o) => {
    const md = (o.metadata ?? {}) as Obj;
    if (
      namespace &&
      md.namespace === undefined &&
      o.kind !== 'Namespace' &&
      o.kind !== 'CustomResourceDefinition' &&
      !String(o.kind).startsWith('Cluster')
    )
      return { ...o, metadata: { ...md, namespace } };
    return o;
  });
}
