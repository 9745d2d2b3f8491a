// Tests only: a hash-chained evidence store in memory that refuses every append while `down` is set (like a
// full disk). Shared by the recorder's and the capabilities' tests of "evidence fails closed".
import { verifyChain, type EvidenceEvent, type EvidenceInput, type VerifyResult } from '../../domain/evidence.ts';
import { link, sha256, type EvidenceStore } from './store.ts';

export class FlakyMemoryStore implements EvidenceStore {
  readonly kind = 'sqlite' as const;
  readonly events: EvidenceEvent[] = [];
  down = false;
  /** reads fail too (a database that is not there), not only appends */
  unreachable = false;
  attempts = 0;

  async append(e: EvidenceInput): Promise<EvidenceEvent> {
    this.attempts++;
    if (this.down || this.unreachable) throw new Error('SQLITE_IOERR_WRITE: disk I/O error');
    const ev = link(this.events.at(-1), e);
    this.events.push(ev);
    return ev;
  }
  async probeWrite(): Promise<void> {
    if (this.down || this.unreachable) throw new Error('SQLITE_IOERR_WRITE: disk I/O error');
  }
  async list(): Promise<EvidenceEvent[]> {
    if (this.unreachable) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    return [...this.events].reverse();
  }
  async latestDataByApp(): Promise<Map<string, string>> {
    return new Map();
  }
  async verify(): Promise<VerifyResult> {
    const last = this.events.at(-1);
    return verifyChain(this.events, sha256, last ? { seq: last.seq, hash: last.hash } : undefined);
  }
  async close(): Promise<void> {}
  types(): string[] {
    return this.events.map((e) => e.type);
  }
}
