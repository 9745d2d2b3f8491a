// Reading many records of a query newest first, page by page, up to a cap: the environment's metrics and its
// calendar read this way. `completeFrom` is the oldest record read when the cap cut the list (the older part of the
// range is missing, and the reader says so). A page the store cannot give throws: the caller answers 503.
import type { EvidenceEvent } from '../../domain/evidence.ts';
import type { EvidenceQuery } from './store.ts';

/** records per store query (the store's own maximum is 5,000) */
const PAGE = 5000;

export async function readCapped(
  list: (q: EvidenceQuery) => Promise<EvidenceEvent[]>,
  filter: EvidenceQuery,
  max: number,
  keep: (e: EvidenceEvent) => boolean = () => true,
): Promise<{ events: EvidenceEvent[]; truncated: boolean; completeFrom?: string }> {
  const out: EvidenceEvent[] = [];
  let read = 0;
  let before: number | undefined;
  for (;;) {
    const size = Math.min(PAGE, max - read);
    const batch = await list({ ...filter, ...(before !== undefined ? { beforeSeq: before } : {}), limit: size });
    read += batch.length;
    for (const e of batch) if (keep(e)) out.push(e);
    const last = batch.at(-1);
    if (batch.length < size || !last) return { events: out, truncated: false };
    before = last.seq;
    if (read >= max) {
      const more = await list({ ...filter, beforeSeq: before, limit: 1 });
      return more.length
        ? { events: out, truncated: true, completeFrom: last.time }
        : { events: out, truncated: false };
    }
  }
}
