// The sandbox OCI registry: CNCF Distribution (built from its Go module by
// build.sh) on its own 127.0.0.1 port with a filesystem store, and tiny
// images pushed at first start with go-containerregistry (sandbox/go/imagepush):
// one image per workload of the seed repo in two or three versions.
//
// The seed repo names its images `registry.example.com/digital-human/...`;
// the sandbox registry serves them as a mirror of that host (like a
// containerd hosts.toml mirror), so Git keeps stable, real-looking names and
// the digests are real. Images are deterministic: the same repo:tag has the
// same digest on every machine (seed.ts pins prod by one of them).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { alive, freePort, startProcess, stopProcess, waitFor, type ProcRecord } from './procs.ts';
import { PROD_RENDER_WORKER_DIGEST, SEED_IMAGE_HOST } from './seed.ts';

/** Repositories and tags pushed at first start. `tts-gateway:2.1.0` is the tag the scenarios move. */
export const SANDBOX_IMAGES: Record<string, string[]> = {
  'digital-human/render-worker': ['1.4.0', '1.4.2', '1.5.0-rc.1'],
  'digital-human/tts-gateway': ['2.0.0', '2.1.0', '2.1.0-build.2'],
  'digital-human/session-cache': ['7.1', '7.2'],
  'digital-human/edge-gateway': ['0.9.2', '0.9.3'],
};

export interface PushedImage {
  ref: string;
  digest: string;
}

export interface RegistryState {
  kind: 'distribution';
  port: number;
  /** 127.0.0.1:<port> */
  host: string;
  /** http://127.0.0.1:<port> */
  url: string;
  /** the image host the seed repo names; this registry serves it */
  mirrorOf: string;
  dir: string;
  proc: ProcRecord;
  images: PushedImage[];
}

function configYml(dir: string, port: number): string {
  return `version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: ${join(dir, 'data')}
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: 127.0.0.1:${port}
  secret: ${randomBytes(24).toString('hex')}
  headers:
    X-Content-Type-Options: [nosniff]
`;
}

const registryEnv = { OTEL_TRACES_EXPORTER: 'none', OTEL_SDK_DISABLED: 'true' };

export async function startRegistry(opts: { dir: string; binDir: string }): Promise<RegistryState> {
  const { dir } = opts;
  const regBin = join(opts.binDir, 'registry');
  const pushBin = join(opts.binDir, 'imagepush');
  if (!existsSync(regBin) || !existsSync(pushBin))
    throw new Error(`the registry is not built (${regBin}); run: bash sandbox/build.sh registry`);
  mkdirSync(join(dir, 'data'), { recursive: true });
  const imagesFile = join(dir, 'images.json');
  const port = await freePort();
  const config = join(dir, 'config.yml');
  writeFileSync(config, configYml(dir, port), { mode: 0o600 });
  const proc = startProcess('registry', regBin, ['serve', config], join(dir, 'registry.log'), registryEnv);
  const host = `127.0.0.1:${port}`;
  const url = `http://${host}`;
  await waitFor('registry /v2/', async () => (await fetch(`${url}/v2/`)).status === 200, {
    proc,
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  let images: PushedImage[];
  if (existsSync(imagesFile)) {
    images = JSON.parse(readFileSync(imagesFile, 'utf8')) as PushedImage[];
  } else {
    const refs = Object.entries(SANDBOX_IMAGES).flatMap(([repo, tags]) => tags.map((t) => `${repo}:${t}`));
    images = imagepush(opts.binDir, ['push', '--registry', host, ...refs]);
    writeFileSync(imagesFile, JSON.stringify(images, null, 2));
  }
  const pinned = images.find((i) => i.ref === 'digital-human/render-worker:1.4.2');
  if (pinned?.digest !== PROD_RENDER_WORKER_DIGEST)
    throw new Error(
      `seed.ts pins prod's render worker to ${PROD_RENDER_WORKER_DIGEST}, but the registry built ${pinned?.digest ?? 'nothing'} for render-worker:1.4.2 (imagepush changed? update PROD_RENDER_WORKER_DIGEST)`,
    );
  return { kind: 'distribution', port, host, url, mirrorOf: SEED_IMAGE_HOST, dir, proc, images };
}

export function imagepush(binDir: string, args: string[]): PushedImage[] {
  try {
    const out = execFileSync(join(binDir, 'imagepush'), args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    return out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as PushedImage);
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`imagepush ${args[0]}: ${err.stderr?.trim() || err.message}`);
  }
}

/** Points `repo:tag` at the manifest `from` names (another tag, or a `sha256:` digest): a moved mutable tag. */
export function moveTag(st: RegistryState, binDir: string, repo: string, tag: string, from: string): string {
  const src = from.startsWith('sha256:') ? `${repo}@${from}` : `${repo}:${from}`;
  const [r] = imagepush(binDir, ['tag', '--registry', st.host, `${repo}:${tag}`, src]);
  if (!r) throw new Error('imagepush tag printed nothing');
  return r.digest;
}

const MANIFEST_ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

/**
 * What a container runtime resolves an image reference to: `host/repo:tag`
 * or `host/repo@sha256:…`, with `mirrorOf` served by this registry.
 * Returns the manifest digest, or undefined when the registry does not know it.
 */
export async function resolveDigest(
  reg: Pick<RegistryState, 'url' | 'mirrorOf' | 'host'>,
  image: string,
): Promise<string | undefined> {
  const parsed = parseImageRef(image);
  if (!parsed || (parsed.host !== reg.mirrorOf && parsed.host !== reg.host)) return undefined;
  const ref = parsed.digest ?? parsed.tag ?? 'latest';
  const r = await fetch(`${reg.url}/v2/${parsed.repo}/manifests/${ref}`, {
    method: 'HEAD',
    headers: { accept: MANIFEST_ACCEPT },
    signal: AbortSignal.timeout(5000),
  });
  if (r.status === 404) return undefined;
  if (!r.ok) throw new Error(`registry HEAD ${parsed.repo}:${ref}: HTTP ${r.status}`);
  return r.headers.get('docker-content-digest') ?? undefined;
}

export function parseImageRef(
  image: string,
): { host: string; repo: string; tag?: string; digest?: string } | undefined {
  const [nameTag = '', digest] = image.split('@');
  const slash = nameTag.indexOf('/');
  if (slash < 0) return undefined;
  const host = nameTag.slice(0, slash);
  if (!host.includes('.') && !host.includes(':') && host !== 'localhost') return undefined;
  let rest = nameTag.slice(slash + 1);
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  return { host, repo: rest, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

export async function stopRegistry(st: Pick<RegistryState, 'proc'>): Promise<void> {
  if (st.proc.pid > 0) await stopProcess(st.proc.pid, 3000);
}

/** Starts the registry again with the same command line and port (after a stop). */
export async function restartRegistry(st: RegistryState): Promise<RegistryState> {
  if (alive(st.proc.pid)) return st;
  const [binPath = '', ...args] = st.proc.cmd;
  const proc = startProcess('registry', binPath, args, st.proc.log, registryEnv);
  await waitFor('registry /v2/', async () => (await fetch(`${st.url}/v2/`)).status === 200, {
    proc,
    timeoutMs: 30_000,
  });
  return { ...st, proc };
}
