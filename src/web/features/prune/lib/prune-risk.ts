// Words for a prune preview: the risk summary and what each state means. Plain functions, unit-tested.
import type { PrunePreview } from '../../../../api/schemas.ts';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * "3 objects to delete, 1 protected, 1 blocked, 1 unknown, cascades to 240 more objects" — or the clear "nothing will
 * be deleted". Blocked (a protected object goes with it) and unknown (what goes with it could not be listed) are
 * counted from the candidates when the preview has them (the queue's summaries do not).
 */
export function riskSummary(
  p: Pick<PrunePreview, 'plan' | 'summary'> & { candidates?: PrunePreview['candidates'] },
): string {
  const blocked = (p.candidates ?? []).filter((c) => !c.protectedBy && c.blockedBy).length;
  const unknown = (p.candidates ?? []).filter((c) => !c.protectedBy && !c.blockedBy && c.cascadesUnknown).length;
  if (p.plan === 'unknown')
    return unknown
      ? `Unknown: what ${plural(unknown, 'object')} would take with ${unknown === 1 ? 'it' : 'them'} could not be listed, so nothing can be deleted`
      : 'Unknown: the desired state could not be determined, so nothing can be deleted';
  const kept = [
    ...(p.summary.protected ? [`${plural(p.summary.protected, 'protected object')} kept`] : []),
    ...(blocked
      ? [`${blocked} blocked by a protected object that would go with ${blocked === 1 ? 'it' : 'them'}`]
      : []),
  ];
  if (p.summary.deletions === 0)
    return kept.length ? `Nothing will be deleted (${kept.join(', ')})` : 'Nothing will be deleted';
  const parts = [plural(p.summary.deletions, 'object') + ' to delete'];
  if (p.summary.protected) parts.push(`${p.summary.protected} protected`);
  if (blocked) parts.push(`${blocked} blocked`);
  if (unknown) parts.push(`${unknown} unknown (kept)`);
  if (p.summary.cascades) parts.push(`cascades to ${plural(p.summary.cascades, 'more object')}`);
  return parts.join(', ');
}

/** Batches done out of all, from the journal (for the progress bar). */
export function batchProgress(p: Pick<PrunePreview, 'journal'>): { done: number; total: number; failed: boolean } {
  const batches = new Map<number, boolean>();
  let failed = false;
  for (const j of p.journal) {
    const finished = j.state === 'deleted' || j.state === 'gone';
    if (j.state === 'failed') failed = true;
    batches.set(j.batch, (batches.get(j.batch) ?? true) && finished);
  }
  return { done: [...batches.values()].filter(Boolean).length, total: batches.size, failed };
}
