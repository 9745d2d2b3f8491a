// The last step of every end (unfreeze, expiry, an end taken over from a dead process): each frozen app's
// prior automation restored exactly, with evidence per app, then the freeze ended in the store — all under the
// end's claim (claim.ts): renewed before the first patch, checked before each, and every write fenced by it.
import { appSetRestoreOps, restorePatch } from '../../domain/freeze.ts';
import type { Obj } from '../../domain/object-meta.ts';
import { HttpError } from '../http/errors.ts';
import { CONCURRENCY, mapLimit, patchAppSet, patchObject, readObject, setRolloutPaused } from './app-objects.ts';
import type { EndClaim } from './claim.ts';
import type { FreezeDoc, FreezeRow } from './store.ts';
import type { EndDecision, EndProgress, FreezeActor, FreezeContext } from './types.ts';
import { outcomeUnknown } from './uncertain.ts';
import { SETTLE_DEADLINE_MS } from '../kube/unanswered-write.ts';

/**
 * Restores every target's prior automation and ends the freeze (status `ending` → `ended`), under `claim`. Call it
 * only once the write-back's outcome is recorded. A failed restore throws RestoreFailed (the freeze still ending,
 * under the claim: the caller decides); a lost claim throws ClaimLostError before the next patch.
 */
export async function finishFreeze(
  ctx: FreezeContext,
  f: FreezeRow,
  who: FreezeActor | undefined,
  how: string,
  decisions: EndDecision[],
  resumed: boolean,
  claim: EndClaim,
  progress: EndProgress = { written: [], restored: [] },
): Promise<void> {
  const { deps } = ctx;
  const doc: FreezeDoc = { ...f.doc, targets: f.doc.targets.map((t) => ({ ...t })) };
  const failures: string[] = [];
  const actor = who?.name ?? 'console';
  const conn = deps.conn(f.cluster, who);
  // the claim renewed now: no other process can take the end over while the patches go out
  await claim.confirm();
  await mapLimit(
    doc.targets.filter((x) => x.applied && !x.restored?.ok),
    CONCURRENCY,
    async (t) => {
      if (claim.lost) await claim.confirm();
      try {
        await deps.recorder.act(
          {
            time: new Date(ctx.now()).toISOString(),
            type: 'freeze.restored',
            actor,
            app: t.appId,
            cluster: f.cluster,
            env: t.env,
            data: { freezeId: f.id, restore: t.prior, how, ...(resumed ? { resumedAfterRestart: true } : {}) },
          },
          async () => {
            const result = await restoreApp();
            // its Rollouts' spec.paused as each was
            for (const r of t.prior.rollouts ?? [])
              await setRolloutPaused(conn, r, r.paused, `cannot restore ${r.kind ?? 'Rollout'} ${r.name}`);
            // then its ApplicationSet: exactly what the freeze added there is taken back
            const set = t.prior.controller === 'argocd' ? t.prior.appSet : undefined;
            if (set)
              await patchAppSet(
                conn,
                set.namespace,
                set.name,
                (live) => appSetRestoreOps(set, live, t.name),
                `cannot restore ApplicationSet ${set.name}`,
              );
            return result;
          },
          (o) => (o.ok ? { result: o.value } : {}),
        );
        t.restored = { at: new Date(ctx.now()).toISOString(), ok: true };
        progress.restored.push(t.name);
      } catch (e) {
        const msg = e instanceof HttpError ? e.message : String(e);
        t.restored = { at: new Date(ctx.now()).toISOString(), ok: false, detail: msg };
        failures.push(`${t.name}: ${msg}`);
      }
      async function restoreApp(): Promise<'restored' | 'gone'> {
        // the informers' copy first; when the patch does not fit it (an annotation already gone), the object
        // is read and the patch computed again
        const cached = deps.apps.raw(t.appId);
        if (cached)
          try {
            await patchObject(conn, t, restorePatch(t.prior, cached), `cannot restore ${t.name}`);
            return 'restored';
          } catch (e) {
            if (!(e instanceof HttpError) || ![404, 409, 422].includes(e.status)) {
              if (!outcomeUnknown(e)) throw e;
              return restoreOnceAnswered(e);
            }
          }
        return readAndRestore().catch((e: unknown) => {
          if (!outcomeUnknown(e)) throw e;
          return restoreOnceAnswered(e);
        });
      }
      async function readAndRestore(): Promise<'restored' | 'gone'> {
        let live: Obj;
        try {
          live = await readObject(conn, t);
        } catch (e) {
          if (e instanceof HttpError && e.status === 404) return 'gone';
          throw e;
        }
        await patchObject(conn, t, restorePatch(t.prior, live), `cannot restore ${t.name}`);
        return 'restored';
      }
      /**
       * A restore patch the cluster never answered may still land (decision 0022). The restore is the same
       * whenever it is applied, so it is made again, from the object as it is, once the apiserver answers (for
       * SETTLE_DEADLINE_MS at most): a late copy of it then changes nothing. Still no answer: the restore failed
       * (the freeze holds and says so; the late patch may yet resume the app, which the out-of-band watch shows).
       */
      async function restoreOnceAnswered(first: unknown): Promise<'restored' | 'gone'> {
        const now = deps.settle?.now ?? Date.now;
        const pause = deps.settle?.pause ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
        const until = now() + (deps.settle?.deadlineMs ?? SETTLE_DEADLINE_MS);
        let last = first;
        for (let attempt = 1; now() < until; attempt++) {
          await pause(Math.min(1000, 100 * 2 ** attempt));
          await claim.confirm();
          try {
            return await readAndRestore();
          } catch (e) {
            // not there yet (a refused connection included): try again
            if (!(e instanceof HttpError && e.code === 'ClusterUnreachable')) throw e;
            last = e;
          }
        }
        throw last;
      }
    },
  );
  // the restore results on the freeze as stored (the write-back outcomes recorded before stay)
  const targets = new Map(doc.targets.map((t) => [t.appId, t]));
  await claim.modify((r) => ({
    doc: { ...r.doc, decisions, targets: r.doc.targets.map((t) => targets.get(t.appId) ?? t) },
  }));
  if (failures.length)
    throw new HttpError(
      502,
      'RestoreFailed',
      `the prior automation could not be restored on ${failures.join('; ')}; the freeze holds — try again`,
    );
  await claim.transition('ended', { by: actor, reason: how });
  ctx.dropClaims();
}
