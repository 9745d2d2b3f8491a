// The release recorder's states 3 artifact and 4 render: the source artifact digest and each container image
// the render names (mutable tags flagged, tags resolved to digests through configured registry mirrors); the
// renderer, version, render hash and object count (DiffService.desired: the diff's renderer).
import { describeSops, plaintextInGit } from '../../domain/secrets-in-git.ts';
import type { App } from '../../domain/app.ts';
import { parseImage } from '../../domain/image.ts';
import { shaOf } from '../../domain/release-commit.ts';
import { EFFECT_EVENT_TYPES, releaseEffect, runningRelease, type ReleaseEffect } from '../../domain/release-effect.ts';
import { imagesOf, type ImageRef } from '../../domain/release-images.ts';
import { withoutUserInfo } from '../../domain/url-credentials.ts';
import { localIoError, RenderError, renderCanonical, type RenderResult } from '../diff/index.ts';
import { message, type StateContext, type Tracked } from './tracking.ts';

/** CONSOLE_REGISTRY_MIRRORS `host=url,…` → image host → registry base URL (no trailing `/`). */
export function parseRegistryMirrors(v: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (v ?? '').split(',')) {
    const i = part.indexOf('=');
    if (i > 0)
      out[part.slice(0, i).trim()] = part
        .slice(i + 1)
        .trim()
        .replace(/\/$/, '');
  }
  return out;
}

export async function recordArtifactAndRender(ctx: StateContext, app: App, rel: Tracked): Promise<void> {
  const digest = app.source.artifactDigest ?? null;
  let render: RenderResult;
  try {
    render = await ctx.o.desired(app);
  } catch (e) {
    // the console's own disk failed (full, read-only): nothing is known of the release; the tick fails and is
    // tried again, never recorded as the release's failed render (chaos: release-record × disk-full)
    const io = localIoError(e);
    if (io) throw new Error(`the console's disk failed while rendering (${io}): tried again`, { cause: e });
    const source = e instanceof RenderError && e.stage === 'source';
    if (!rel.recorded.has('artifact'))
      ctx.emit(app, rel, 'artifact', 'console', {
        artifactDigest: digest,
        sourceUrl: withoutUserInfo(app.source.url) ?? null,
        ...(source
          ? { status: 'unknown', reason: `source not fetched: ${message(e)}` }
          : { images: [], imagesUnknown: 'the render failed: no images to list' }),
      });
    ctx.emit(app, rel, 'render', 'console', {
      status: source ? 'unknown' : 'failed',
      reason: source ? `no source to render: ${message(e)}` : `render failed: ${message(e)}`,
      stage: e instanceof RenderError ? e.stage : 'unknown',
    });
    return;
  }
  const rendered = shaOf(render.revision);
  if (rendered && rendered !== rel.sha) return; // the source moved on meanwhile (or Argo CD is at another revision)
  const images: Array<ImageRef & { resolved?: string; resolveError?: string }> = [];
  for (const img of imagesOf(render.objects).slice(0, 100)) {
    const r = img.digest ? {} : await resolveTag(ctx.o.registryMirrors, img.image);
    images.push({ ...img, ...r });
  }
  rel.images = images;
  ctx.emit(app, rel, 'artifact', 'console', {
    artifactDigest: render.artifactDigest ?? digest,
    sourceUrl: withoutUserInfo(app.source.url) ?? null,
    images,
    mutableImages: images.filter((i) => i.mutable).length,
  });
  const secrets = render.secretsInGit ?? [];
  const plaintext = plaintextInGit(secrets);
  const manifest = await storeManifest(ctx, render);
  const effect = await effectOf(ctx, app, rel, render.renderHash, images);
  if (effect.effect === 'unchanged') rel.unchangedFrom = effect.sameAs;
  ctx.emit(app, rel, 'render', 'console', {
    renderer: render.renderer,
    renderedRevision: render.revision,
    renderHash: render.renderHash,
    objects: render.objects.length,
    // a commit that leaves what the app runs as it is (another app's, in a monorepo) is no release of this app
    ...effect,
    ...(manifest ? { manifest } : {}),
    // how Git holds the render's Secrets (file, keys, SOPS metadata): never a value
    ...(secrets.length
      ? {
          secrets: secrets.slice(0, 100).map((s) => ({
            secret: `${s.namespace ? `${s.namespace}/` : ''}${s.name}`,
            file: s.file,
            keys: s.keys,
            encryption: s.sops ? describeSops(s.sops) : 'none (plaintext in Git)',
          })),
        }
      : {}),
  });
  // a Secret Git holds in plaintext: flagged once per release, naming the file and the keys
  for (const f of plaintext.slice(0, 50))
    ctx.emitOther(app, rel, 'secret.plaintext-in-git', 'console', {
      file: f.file,
      secret: f.secret,
      keys: f.keys,
      revision: render.revision,
    });
}

/** What this release changes against the app's running release (release-effect.ts); unreadable records: a change. */
async function effectOf(
  ctx: StateContext,
  app: App,
  rel: Tracked,
  renderHash: string,
  images: Array<ImageRef & { resolved?: string }>,
): Promise<ReleaseEffect> {
  let events: Awaited<ReturnType<StateContext['o']['store']['list']>>;
  try {
    events = await ctx.o.store.list({ app: app.id, type: [...EFFECT_EVENT_TYPES], limit: 300 });
  } catch (e) {
    return { effect: 'changed', since: null, why: `the app's earlier releases could not be read: ${message(e)}` };
  }
  return releaseEffect({ renderHash, images }, runningRelease(events, rel.sha));
}

/** The masked render kept by its hash ('stored' the first time, 'present' after); 'failed' is said, not thrown. */
async function storeManifest(
  ctx: StateContext,
  render: RenderResult,
): Promise<'stored' | 'present' | 'failed' | undefined> {
  const store = ctx.o.manifests;
  if (!store) return undefined;
  try {
    // present: its last use is now (retention counts from the newest release made of it)
    if (await store.touch(render.renderHash)) return 'present';
    return await store.put(render.renderHash, renderCanonical(render.objects), render.objects.length);
  } catch (e) {
    ctx.o.log.warn({ renderHash: render.renderHash, err: message(e) }, 'release manifest not stored');
    return 'failed';
  }
}

/** A tag's digest at a configured registry mirror (HEAD on the manifest); nothing when none is configured. */
async function resolveTag(
  registryMirrors: Record<string, string> | undefined,
  image: string,
): Promise<{ resolved?: string; resolveError?: string }> {
  const p = parseImage(image);
  const slash = p.name.indexOf('/');
  const host = slash > 0 ? p.name.slice(0, slash) : '';
  const base = registryMirrors?.[host];
  if (!base) return {};
  try {
    const r = await fetch(`${base}/v2/${p.name.slice(slash + 1)}/manifests/${p.tag ?? 'latest'}`, {
      method: 'HEAD',
      headers: {
        accept: [
          'application/vnd.oci.image.index.v1+json',
          'application/vnd.oci.image.manifest.v1+json',
          'application/vnd.docker.distribution.manifest.list.v2+json',
          'application/vnd.docker.distribution.manifest.v2+json',
        ].join(', '),
      },
      signal: AbortSignal.timeout(5000),
    });
    const d = r.headers.get('docker-content-digest');
    return r.ok && d ? { resolved: d } : { resolveError: `registry answered HTTP ${r.status}` };
  } catch (e) {
    return { resolveError: message(e) };
  }
}
