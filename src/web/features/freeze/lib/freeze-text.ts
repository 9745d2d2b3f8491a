// Pure helpers of the freeze UI: the field errors of a 400, the time left, a change's values, placements.

/** The fields of a freeze request the BFF names in a 400 ("reason: a reason is required; minutes: …"). */
export const FREEZE_FIELDS = ['cluster', 'env', 'app', 'reason', 'incident', 'minutes', 'decisions'] as const;
export type FreezeField = (typeof FREEZE_FIELDS)[number];

/** Splits a 400's message into one message per named field; what names no field stays in `other`. */
export function fieldErrors(message: string): { fields: Partial<Record<FreezeField, string>>; other: string[] } {
  const fields: Partial<Record<FreezeField, string>> = {};
  const other: string[] = [];
  for (const part of message.split(/;\s*/).filter(Boolean)) {
    const m = /^([a-z]+)(?:\.[\w.]+)?:\s*(.*)$/s.exec(part);
    const f = m?.[1] as FreezeField | undefined;
    if (m && f && (FREEZE_FIELDS as readonly string[]).includes(f))
      fields[f] = fields[f] ? `${fields[f]}; ${m[2] ?? ''}` : (m[2] ?? '');
    else other.push(part);
  }
  return { fields, other };
}

/** "1 h 52 min", "9 min 5 s", "40 s"; "expired" once the time has passed. */
export function timeLeft(untilIso: string, now: number): string {
  const ms = Date.parse(untilIso) - now;
  if (Number.isNaN(ms)) return 'unknown';
  if (ms <= 0) return 'expired';
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h} h ${m} min`;
  if (m >= 10) return `${m} min`;
  if (m > 0) return `${m} min ${s % 60} s`;
  return `${s} s`;
}

/** A Git or live value as one line: absent, a scalar as itself, anything else as compact JSON. */
export function valueText(v: unknown): string {
  if (v === undefined) return '(absent)';
  if (v === null) return 'null';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

export const shortSha = (sha: string | null | undefined): string => (sha ? sha.slice(0, 7) : '');

export type Placement =
  | { changeId: string; placed: true; file: string; how?: string; note?: string }
  | { changeId: string; placed: false; reason: string; yaml: string };

/** The write-back placements (the contract keeps them open): only well-formed ones, read defensively. */
export function readPlacements(list: unknown[]): Placement[] {
  const out: Placement[] = [];
  for (const p of list) {
    if (!p || typeof p !== 'object') continue;
    const o = p as Record<string, unknown>;
    const changeId = typeof o.changeId === 'string' ? o.changeId : '';
    if (o.placed === true)
      out.push({
        changeId,
        placed: true,
        file: typeof o.file === 'string' ? o.file : '(unknown file)',
        ...(typeof o.how === 'string' ? { how: o.how } : {}),
        ...(typeof o.note === 'string' && o.note ? { note: o.note } : {}),
      });
    else
      out.push({
        changeId,
        placed: false,
        reason: typeof o.reason === 'string' ? o.reason : 'not placed',
        yaml: typeof o.yaml === 'string' ? o.yaml : '',
      });
  }
  return out;
}

/** "Deployment dev/render-worker" */
export const objectText = (ref: { kind: string; namespace?: string | undefined; name: string }): string =>
  `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;

/** The name of an app from its id (cluster/namespace/kind/name). */
export const appNameOf = (appId: string): string => appId.split('/').at(-1) ?? appId;
