// Manifests per release (api/manifests.ts): read with the release chain's own rule (release.read on the app's
// cluster and environment; for a comparison across environments, on both apps: the second app gets the checks the
// guard and appOf give the first, its grants and in impersonation mode Kubernetes RBAC on its object, and a refusal
// is a 403 recorded as access.denied).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { can, whyNot, whyNotOnApp, type Scope } from '../../domain/access.ts';
import type { App } from '../../domain/app.ts';
import { compareRenders, targetNamespace } from '../../domain/render-compare.ts';
import {
  CompareQuery,
  CompareResponse,
  ReleaseAtQuery,
  ReleaseAtResponse,
  ReleaseManifestsResponse,
} from '../../api/manifests.ts';
import { appOf } from '../apps/index.ts';
import { appObjectOf, appVisibility, recordDenial } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';
import { ManifestExpired, ManifestStore, ManifestTampered, type StoredManifest } from '../store/manifest-store.ts';
import { manifestsSeenBy } from './manifests-seen-by.ts';

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
      // as this reader may see them: what is hidden is counted, with why (manifests-seen-by.ts, issue 40)
      const seen = await manifestsSeenBy(req, deps, a.cluster, s.m.objects);
      return validated(ReleaseManifestsResponse, {
        sha: s.sha,
        renderHash: s.renderHash,
        recordedAt: s.m.storedAt,
        storedBytes: s.m.storedBytes,
        bytes: s.m.bytes,
        objects: seen.objects,
        ...(seen.hidden ? { hidden: seen.hidden } : {}),
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
      const other = q.toApp && q.toApp !== a.id ? await otherApp(req, deps, q.toApp) : a;
      const [from, to] = await Promise.all([stored(a, q.from), stored(other, q.to)]);
      // two apps (one app in two environments): each side's target namespace is matched as one
      const targets =
        other === a ? undefined : { from: targetNamespace(from.m.objects), to: targetNamespace(to.m.objects) };
      return validated(CompareResponse, {
        from: {
          app: a.id,
          sha: from.sha,
          renderHash: from.renderHash,
          ...(targets ? { targetNamespace: targets.from } : {}),
        },
        to: {
          app: other.id,
          sha: to.sha,
          renderHash: to.renderHash,
          ...(targets ? { targetNamespace: targets.to } : {}),
        },
        ...compareRenders(from.m.objects, to.m.objects, targets),
      });
    },
  );
};

const COMPARE_ACTION = 'release.read';

/**
 * The app compared with (`toApp`), with the checks the first app gets: the guard's (release.read on its cluster and
 * environment; an id the console does not know only for someone with that grant on every environment of its
 * cluster) and appOf's (in impersonation mode, Kubernetes RBAC lets this user get the app's object: appVisibility).
 * A refusal is a 403 recorded as `access.denied`, whose message names neither the app's environment nor whether it
 * exists; an app that does not exist is a 404 only to someone who passed both.
 */
async function otherApp(req: FastifyRequest, deps: AppDeps, id: string): Promise<App> {
  deps.catalog.settleNow();
  const a = deps.catalog.get(id);
  // an app id is cluster/namespace/kind/name, and only a cluster name may hold a '/'
  const parts = id.split('/');
  const [namespace, kind, name] = parts.slice(-3);
  const cluster = a?.cluster ?? parts.slice(0, -3).join('/');
  if (!cluster || !namespace || !kind || !name) throw new HttpError(400, 'BadRequest', 'toApp: an app id');
  const scope = { cluster, env: a?.env ?? '*', app: id, ...(a ? {} : { unknownApp: true as const }) };
  const grantScope: Scope = a ? { cluster, env: a.env } : { cluster };
  const refuse = (reason: string, said: string): never => {
    recordDenial(deps.recorder, req, COMPARE_ACTION, scope, reason);
    throw new HttpError(403, 'Forbidden', `Cannot compare with ${id}: ${said}`);
  };
  const user = req.principal;
  const grants = user?.grants ?? [];
  // an unknown app's environment is '*', every one: only a grant on every environment covers it (as in the guard)
  const granted = a
    ? can(grants, COMPARE_ACTION, grantScope)
    : grants.some((g) => g.envs.includes('*') && can([g], COMPARE_ACTION, grantScope));
  if (!user || !granted)
    refuse(
      whyNot(grants, COMPARE_ACTION, grantScope) ?? whyNotOnApp(COMPARE_ACTION, undefined),
      whyNotOnApp(COMPARE_ACTION, cluster),
    );
  // in impersonation mode, as appOf and the app list decide: Kubernetes RBAC lets this user get the app's object
  if (deps.reviewer && !(await appVisibility(deps.reviewer, req)(id))) {
    const o = appObjectOf(id);
    const what = o ? `${o.kind} objects in ${o.namespace}` : 'its app object';
    refuse(
      `Kubernetes RBAC does not let ${user?.name ?? 'anonymous'} get ${what} on ${cluster}`,
      `your Kubernetes RBAC does not let you get ${what} on ${cluster}`,
    );
  }
  if (!a) throw new HttpError(404, 'NotFound', `no app ${id}`);
  return a;
}
