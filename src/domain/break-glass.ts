// Break-glass through a planned freeze window (issue 43), pure: what a request must say, how long it lifts the
// window for its app, and who may not approve it. A developer asks (reason, minutes); a second person with on-call
// rights approves; the window's freeze of that app is ended (Git wins, the automation restored, so the controller
// deploys), and when the time is up the app is frozen again until the occurrence's end. Decision 0026.

/** the longest one break-glass may lift a window for an app */
export const BREAK_GLASS_MAX_MINUTES = 60;
export const BREAK_GLASS_MAX_REASON = 500;

export const BREAK_GLASS_STATES = ['requested', 'approved', 'ended', 'lapsed', 'failed'] as const;
export type BreakGlassState = (typeof BREAK_GLASS_STATES)[number];

export interface BreakGlassInput {
  app: string;
  reason: string;
  minutes: number;
}

/** Each wrong field named (a 400): a reason, and whole minutes from 1 to 60. */
export function breakGlassErrors(b: BreakGlassInput): Array<{ field: string; message: string }> {
  const errors: Array<{ field: string; message: string }> = [];
  if (!b.app.trim()) errors.push({ field: 'app', message: 'name the app to deploy through the window' });
  if (!b.reason.trim()) errors.push({ field: 'reason', message: 'say why this cannot wait for the window to end' });
  else if (b.reason.length > BREAK_GLASS_MAX_REASON)
    errors.push({ field: 'reason', message: `at most ${BREAK_GLASS_MAX_REASON} characters` });
  if (!Number.isInteger(b.minutes) || b.minutes < 1 || b.minutes > BREAK_GLASS_MAX_MINUTES)
    errors.push({ field: 'minutes', message: `whole minutes from 1 to ${BREAK_GLASS_MAX_MINUTES}` });
  return errors;
}

/** Until when an approval at `approvedAt` lifts the window: its minutes, never past the occurrence's end. */
export function breakGlassUntil(approvedAt: number, minutes: number, occurrenceEnd: number): number {
  return Math.min(approvedAt + minutes * 60_000, occurrenceEnd);
}
