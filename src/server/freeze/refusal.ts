// A freeze action (start, extend, end) refused by a check that needs no write: one `action.refused` record naming
// the action and the reason (recorder.refuse(): the same refusal repeated within a minute is counted, not appended
// again), then the 409 the person is told — never the action's intent followed by `action.failed`. A race lost
// after the intent (the store's own check inside the action) is still `action.failed`.
import type { EvidenceType } from '../../domain/evidence.ts';
import { HttpError } from '../http/errors.ts';
import type { FreezeActor, FreezeContext } from './types.ts';

export interface FreezeRefusal {
  /** the action refused: the evidence type its intent would have had */
  action: Extract<EvidenceType, 'freeze.started' | 'freeze.extended' | 'freeze.ended'>;
  cluster: string;
  env: string | null;
  app: string | null;
  /** why, as the person is told (the 409's message) */
  reason: string;
  /** what the attempt named (the freeze, the apps): the same attempt repeated must give the same data */
  data: Record<string, unknown>;
}

/** Records the refusal (never throws for the store: the refusal stands when it is down) and throws the 409. */
export async function refuseFreeze(ctx: FreezeContext, user: FreezeActor, r: FreezeRefusal): Promise<never> {
  await ctx.deps.recorder.refuse({
    time: new Date(ctx.now()).toISOString(),
    actor: user.name,
    app: r.app,
    cluster: r.cluster,
    env: r.env,
    action: r.action,
    reason: r.reason,
    data: r.data,
  });
  throw new HttpError(409, 'Conflict', r.reason);
}
