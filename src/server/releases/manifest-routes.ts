// Manifests per release (api/manifests.ts): read with the release evidence's own rule (evidence.read on the app's
// cluster and environment; for a comparison across environments, on both apps).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { can } from '../../domain/access.ts';
import type { App } from '../../domain/app.ts';
import { compareRenders } from '../../domain/render-compare.ts';
import {
  CompareQuery,
  CompareResponse,
  ReleaseAtQuery,
  ReleaseAtResponse,
  ReleaseManifestsResponse,
} from '../../api/manifests.ts';
import { appOf } from '../apps/index.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';
import { ManifestExpired, ManifestStore, ManifestTampered, type StoredManifest } from '../store/manifest-store.ts';

const SHA = /^[0-9a-f]{7,64}$/;

export const manifestRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const manifests = new ManifestStore(deps.store);

  /** the newest render recorded for `sha` of the app: its hash and time */
  async function renderOf(a: App, sha: string): Promise<{ sha: string; renderHash: string; time: string } | null> {
    const events = await deps.store.list({ app: a.id, type: 'release.render', text: sha, limit: 50 });
    const e = events.find(
      (x) => typeof x.data.sha === 'string' && x.data.sha.startsWith(sha) && typeof x.data.renderHash === 'string',
    );
    return e ? { sha: String(e.data.sha), renderHash: String(e.data.renderHash), time: e.time } : null;
  }

  async function stored(
    a: App,
    sha: string,
  ): Promise<{ sha: string; renderHash: string; time: string; m: StoredManifest }> {
    if (!SHA.test(sha)) throw new HttpError(400, 'BadRequest', 'sha: a commit id (7 to 64 hex digits)');
    const r = await renderOf(a, sha);
    if (!r) throw new HttpError(404, 'NotFound', `no render of ${sha.slice(0, 12)} is recorded for ${a.id}`);
    let m: StoredManifest | null;
    try {
      m = await manifests.get(r.renderHash);
    } catch (e) {
      if (e instanceof ManifestTampered) throw new HttpError(409, 'ManifestTampered', e.message);
      if (e instanceof ManifestExpired) throw new HttpError(410, 'ManifestExpired', e.message);
      throw e;
    }
    if (!m)
      throw new HttpError(
        404,
        'NotFound',
        `the render of ${r.sha.slice(0, 12)} (${r.renderHash}) was recorded before manifests were kept`,
      );
    return { ...r, m };
  }

  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name/releases/:sha/manifests',
    { config: { access: { action: 'release.read', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      const s = await stored(a, (req.params as { sha: string }).sha);
      return validated(ReleaseManifestsResponse, {
        sha: s.sha,
        renderHash: s.renderHash,
        recordedAt: s.m.storedAt,
        storedBytes: s.m.storedBytes,
        bytes: s.m.bytes,
        objects: s.m.objects,
      });
    },
  );

  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name/releases/at',
    { config: { access: { action: 'release.read', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      const { time } = parsed(ReleaseAtQuery, req.query);
      const iso = new Date(time).toISOString();
      // the newest apply at or before that time: a rollback is a later commit, so it is the one found after it
      const applies = (await deps.store.list({ app: a.id, type: 'release.reconcile', to: iso, limit: 200 })).filter(
        (e) => (e.data.status ?? 'ok') === 'ok' && typeof e.data.sha === 'string',
      );
      const applied = applies[0];
      if (!applied) return validated(ReleaseAtResponse, { time: iso, release: null, previous: null });
      const sha = String(applied.data.sha);
      const before = applies.find((e) => e.data.sha !== sha);
      const r = await renderOf(a, sha);
      return validated(ReleaseAtResponse, {
        time: iso,
        release: { sha, appliedAt: applied.time, renderHash: r?.renderHash ?? null },
        previous: before ? { sha: String(before.data.sha), appliedAt: before.time } : null,
      });
    },
  );

  app.get(
    '/api/apps/:cluster/:namespace/:kind/:name/releases/compare',
    { config: { access: { action: 'release.read', scope: 'app' } } },
    async (req) => {
      const a = await appOf(req, deps);
      const q = parsed(CompareQuery, req.query);
      const other = q.toApp ? otherApp(req, deps, q.toApp) : a;
      const [from, to] = await Promise.all([stored(a, q.from), stored(other, q.to)]);
      return validated(CompareResponse, {
        from: { app: a.id, sha: from.sha, renderHash: from.renderHash },
        to: { app: other.id, sha: to.sha, renderHash: to.renderHash },
        ...compareRenders(from.m.objects, to.m.objects),
      });
    },
  );
};

/** the app compared with, readable by this person (else as if it did not exist) */
function otherApp(req: FastifyRequest, deps: AppDeps, id: string): App {
  const a = deps.catalog.get(id);
  if (!a || !req.principal || !can(req.principal.grants, 'evidence.read', { cluster: a.cluster, env: a.env }))
    throw new HttpError(404, 'NotFound', `no app ${id}`);
  return a;
}
