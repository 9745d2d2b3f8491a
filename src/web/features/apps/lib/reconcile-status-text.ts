// What the "Reconcile now" area says after the request, from the BFF's reconcile-status answer.
import type { ReconcileStatusResponse } from '../../../../api/schemas.ts';
import { shortRevision } from '../../../../domain/app.ts';
import { formatLocalTime } from '../../../components/time.tsx';

export type ReconcileTone = 'pending' | 'ok' | 'error' | 'warn';

/** "23:08:12 CET": the time of day in the user's zone, the console's one time format */
export const localClock = (iso: string, timeZone?: string): string => formatLocalTime(iso, timeZone);

/**
 * "reconciled at 23:08:12 CET: applied 3f2a1c9, 1 field reverted", "reconcile failed at 23:08:12: BuildFailed: …",
 * "not picked up: the controller did not pick the request up within 60 s", or "waiting for the controller…".
 */
export function reconcileStatusText(
  s: ReconcileStatusResponse,
  clock: (iso: string) => string = localClock,
): { tone: ReconcileTone; text: string } {
  const at = s.reconciledAt ? ` at ${clock(s.reconciledAt)}` : '';
  switch (s.state) {
    case 'pending':
      return { tone: 'pending', text: `waiting for the controller${s.message ? ` (${s.message})` : ''}…` };
    case 'reconciled': {
      const parts = [s.revision ? `applied ${shortRevision(s.revision)}` : 'nothing to apply'];
      const n = s.reverted.length;
      if (n) parts.push(`${n} field${n === 1 ? '' : 's'} reverted`);
      return { tone: 'ok', text: `reconciled${at}: ${parts.join(', ')}` };
    }
    case 'failed':
      return {
        tone: 'error',
        text: `reconcile failed${at}: ${[s.reason, s.message].filter(Boolean).join(': ') || 'no reason given'}`,
      };
    case 'timeout':
      return {
        tone: 'warn',
        text: `not picked up: ${s.message ?? `the controller did not answer within ${Math.round(s.timeoutMs / 1000)} s`}`,
      };
  }
}

/** Poll while the controller has not answered; a final answer is refreshed by the live stream instead. */
export const reconcileStatusPollMs = (s: ReconcileStatusResponse | undefined): number | false =>
  !s || s.state === 'pending' ? 1_000 : false;
