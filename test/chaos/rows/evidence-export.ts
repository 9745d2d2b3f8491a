// Chaos row: an auditor exports the whole evidence chain (no intent: a read). Invariants: an export the console
// answers 200 verifies offline in full (its trailer present and signed: never a cut-off file that passes for a
// whole one); an export it cannot make is a clear error status, not a 200; after the fault the export verifies.
import { verifyExportText } from '../../../src/server/evidence/offline-verify.ts';
import { download } from '../../support/auth.ts';
import { exportChain } from '../invariants.ts';
import type { ActionRow, Answer } from '../types.ts';

export const evidenceExport: ActionRow<{ cluster: string }> = {
  id: 'evidence-export',
  label: 'evidence export',
  // no intent: a read; the evidence invariants then check the chain as a whole
  intentType: 'evidence.exported',
  points: [],
  cluster: (s) => s.cluster,
  setup: async () => ({ cluster: 'nonprod' }),
  teardown: async () => undefined,
  prepare: async () => undefined,
  async perform(_s, c): Promise<Answer> {
    const r = c.actor;
    try {
      const key = await download(r.admin, r.base, '/api/evidence/public-key');
      const res = await download(r.admin, r.base, '/api/evidence/export?format=jsonl');
      // the key is kept beside the text for the check (an export is checked with the key of the console that made it)
      return { status: res.status, body: { publicKey: key.status === 200 ? key.text : undefined }, text: res.text };
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  },
  async check(_s, c, run) {
    const broken: string[] = [];
    const a = run.answer;
    if (!('error' in a)) {
      if (a.status === 200) {
        const publicKey = (a.body as { publicKey?: string }).publicKey;
        const v = verifyExportText([a.text], publicKey ? { publicKey } : {});
        if (!v.ok)
          broken.push(`the export answered 200 but does not verify offline: ${v.problems[0]?.reason ?? 'unknown'}`);
        if (v.ok && v.trailer?.signature !== 'valid') broken.push(`the export's trailer is ${v.trailer?.signature}`);
      } else if (a.status < 500 && a.status !== 429)
        broken.push(`the export failed with ${a.status}: ${a.text.slice(0, 120)}`);
      else if (!/"message"/.test(a.text)) broken.push(`the export failed with ${a.status} and no message`);
    }
    const after = await exportChain(c.reader());
    if (!after.ok) broken.push(`after the fault the export does not verify: ${after.verdict}`);
    return broken;
  },
};
