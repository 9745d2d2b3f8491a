// Ending a freeze by hand: the decisions checked, each change chosen for it written back to Git (a branch or
// pull request per app, with evidence), then the prior automation restored (restore.ts).
import type { LiveChange } from '../../domain/freeze.ts';
import { HttpError } from '../http/errors.ts';
import { freezeChanges, mustMay, viewFreeze } from './read.ts';
import { finishFreeze } from './restore.ts';
import type { FreezeDoc, FreezeRow } from './store.ts';
import type { AppChange, EndDecision, FreezeActor, FreezeContext, FreezeServiceDeps, FreezeView } from './types.ts';

/** Ends a freeze: each listed change written back to Git or left to Git, then the prior automation restored. */
export async function endFreeze(
  ctx: FreezeContext,
  id: string,
  user: FreezeActor,
  decisions: EndDecision[],
): Promise<FreezeView> {
  const { deps } = ctx;
  const f = await viewFreeze(ctx, id);
  mustMay(user, f);
  if (f.status !== 'active') throw new HttpError(409, 'Conflict', `freeze ${id} is ${f.status}`);
  const seen = new Set<string>();
  for (const d of decisions) {
    if (seen.has(d.change)) throw new HttpError(400, 'BadRequest', `decisions: ${d.change} is named twice`);
    seen.add(d.change);
  }
  const wanted = decisions.filter((d) => d.action === 'write-back');
  let changes: AppChange[] = [];
  if (wanted.length) {
    const c = await freezeChanges(ctx, id);
    changes = c.changes;
    const unknownIds = wanted.filter((d) => !changes.some((x) => x.id === d.change)).map((d) => d.change);
    if (unknownIds.length)
      throw new HttpError(
        400,
        'BadRequest',
        `decisions: no live change ${unknownIds.join(', ')} (the list changed? reload it)`,
      );
    if (!deps.writeBack) throw new HttpError(501, 'NotImplemented', 'write-back to Git is not configured');
  }
  if (!(await deps.store.transition(id, 'active', 'ending')))
    throw new HttpError(409, 'Conflict', `freeze ${id} is already ending`);
  try {
    await deps.recorder.act(
      {
        time: new Date(ctx.now()).toISOString(),
        type: 'freeze.ended',
        actor: user.name,
        app: f.app,
        cluster: f.cluster,
        env: f.env ?? f.doc.targets[0]?.env ?? null,
        data: { freezeId: id, how: 'unfrozen', decisions },
      },
      async () => {
        await deps.store.update(id, 'ending', { doc: { ...f.doc, decisions } });
        const doc = await writeBackAll(ctx, f, user.name, wanted, changes);
        await finishFreeze(ctx, { ...f, doc: { ...doc, decisions } }, user, 'unfrozen', decisions, false);
      },
    );
  } catch (e) {
    // nothing restored: the freeze stays (the live changes are not lost to a revert)
    if ((await deps.store.get(id))?.status === 'ending') await deps.store.transition(id, 'ending', 'active');
    throw e;
  }
  ctx.disarm(id);
  return viewFreeze(ctx, id);
}

async function writeBackAll(
  ctx: FreezeContext,
  f: FreezeRow,
  actor: string,
  wanted: EndDecision[],
  changes: AppChange[],
): Promise<FreezeDoc> {
  const { deps } = ctx;
  const doc: FreezeDoc = { ...f.doc, writeBack: [...(f.doc.writeBack ?? [])] };
  const byApp = new Map<string, LiveChange[]>();
  for (const d of wanted) {
    const c = changes.find((x) => x.id === d.change) as AppChange;
    byApp.set(c.appId, [...(byApp.get(c.appId) ?? []), c]);
  }
  for (const [appId, list] of byApp) {
    const a = deps.apps.get(appId);
    if (!a) throw new HttpError(409, 'Conflict', `${appId} is gone: nothing can be written back for it`);
    const branch = `freeze/${f.id}${byApp.size > 1 ? `-${a.name}` : ''}`;
    const message = [
      `Write back live changes of freeze ${f.id} (${a.name}, ${a.env})`,
      '',
      `Reason: ${f.reason}`,
      ...(f.incident ? [`Incident: ${f.incident}`] : []),
      '',
      ...list.map(
        (c) =>
          `- ${c.ref.kind}/${c.ref.name} ${c.path}: ${JSON.stringify(c.git)} -> ${JSON.stringify(c.live)} (by ${c.manager})`,
      ),
      '',
      `Freeze-Id: ${f.id}`,
      `Written-Back-By: ${actor}`,
    ].join('\n');
    const out = await deps.recorder.act(
      {
        time: new Date(ctx.now()).toISOString(),
        type: 'freeze.write-back',
        actor,
        app: a.id,
        cluster: a.cluster,
        env: a.env,
        data: {
          freezeId: f.id,
          branch,
          repo: a.source.url ?? null,
          path: a.source.path ?? null,
          changes: list.map((c) => ({ change: c.id, path: c.path, git: c.git, live: c.live, manager: c.manager })),
        },
      },
      async () => {
        try {
          return await (deps.writeBack as NonNullable<FreezeServiceDeps['writeBack']>)(a, {
            branch,
            message,
            author: actor,
            changes: list,
          });
        } catch (e) {
          throw new HttpError(
            502,
            'WriteBackFailed',
            `writing back to Git failed, nothing was restored (the freeze holds): ${e instanceof Error ? e.message : String(e)}`,
          );
        }
      },
      (o) =>
        o.ok
          ? {
              branch: o.value.branch,
              commit: o.value.commit,
              pullRequest: o.value.pullRequest ?? null,
              placements: o.value.placements,
              ...(o.value.forgeError ? { forgeError: o.value.forgeError } : {}),
            }
          : {},
    );
    doc.writeBack?.push({ appId, ...out });
    await deps.store.update(f.id, 'ending', { doc });
  }
  return doc;
}
