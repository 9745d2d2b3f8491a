// Reading freezes: one or the list (with whether each still holds its apps), the live changes made on the
// frozen apps since the freeze began, and whether a person may act on a freeze.
import { liveChangesSince } from '../../domain/freeze.ts';
import { controllerManagersOf, isGitOpsControllerManager } from '../../domain/field-managers.ts';
import { refId } from '../../domain/refs.ts';
import { HttpError } from '../http/errors.ts';
import type { FreezeRow } from './store.ts';
import type { AppChange, FreezeActor, FreezeContext, FreezeView } from './types.ts';

export async function viewFreeze(ctx: FreezeContext, id: string): Promise<FreezeView> {
  const f = await ctx.deps.store.get(id);
  if (!f) throw new HttpError(404, 'NotFound', `no freeze ${id}`);
  return { ...f, active: f.status === 'active' || f.status === 'ending' };
}

export async function listFreezes(ctx: FreezeContext, active: boolean): Promise<FreezeView[]> {
  return (await ctx.deps.store.list({ active })).map((f) => ({
    ...f,
    active: f.status === 'active' || f.status === 'ending',
  }));
}

/** The live changes made since the freeze began, on every app it holds. Unknown diffs are an error, never "none". */
export async function freezeChanges(
  ctx: FreezeContext,
  id: string,
): Promise<{ changes: AppChange[]; unknown: Array<{ appId: string; reason: string }> }> {
  const f = await viewFreeze(ctx, id);
  const changes: AppChange[] = [];
  const unknown: Array<{ appId: string; reason: string }> = [];
  for (const t of f.doc.targets.filter((x) => x.applied)) {
    const a = ctx.deps.apps.get(t.appId);
    if (!a) {
      unknown.push({ appId: t.appId, reason: 'the app object is gone' });
      continue;
    }
    try {
      const d = await ctx.deps.diff(a);
      if (d.state !== 'ok') {
        unknown.push({ appId: t.appId, reason: d.error ?? 'the diff could not be computed' });
        continue;
      }
      const mgrs = controllerManagersOf(a.controller);
      changes.push(
        ...liveChangesSince(
          d.objects.map((o) => ({ ...o, id: refId(o.ref) })),
          f.doc.startedAt,
          (m) => mgrs.includes(m) || isGitOpsControllerManager(m),
        ).map((c) => ({ ...c, appId: a.id })),
      );
    } catch (e) {
      unknown.push({ appId: t.appId, reason: e instanceof HttpError ? e.message : 'the diff failed' });
    }
  }
  return { changes, unknown };
}

/** Throws 403 (recorded as a denial) unless `user` may freeze on every environment the freeze holds. */
export function mustMay(user: FreezeActor, f: FreezeRow): void {
  for (const t of f.doc.targets)
    if (!user.may(f.cluster, t.env)) {
      const why = `You need the oncall role on ${f.cluster}/${t.env} to freeze or unfreeze deployments`;
      user.denied?.(f.cluster, t.env, t.appId, why);
      throw new HttpError(403, 'Forbidden', why);
    }
}
