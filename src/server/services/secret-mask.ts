// Secret values never leave the BFF. Masks are keyed HMACs: the same value
// gives the same mask and different values different masks (so a diff still
// shows *that* something changed), but a mask cannot be reversed or checked
// against guesses offline, because the key is random per process.
import { createHmac, randomBytes } from 'node:crypto';

const KEY = randomBytes(32);
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

export function maskValue(value: unknown): string {
  const h = createHmac('sha256', KEY)
    .update(typeof value === 'string' ? value : JSON.stringify(value ?? null))
    .digest('hex');
  return `<secret ${h.slice(0, 12)}>`;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** Returns a copy of any object with Secret data masked (data, stringData, last-applied annotation). */
export function maskSecrets<T>(obj: T): T {
  if (!isObj(obj)) return obj;
  if (obj.kind === 'List' && Array.isArray(obj.items))
    return { ...obj, items: obj.items.map((i) => maskSecrets(i)) } as T;
  if (obj.kind !== 'Secret') return obj;
  const out: Obj = { ...obj };
  for (const field of ['data', 'stringData']) {
    const d = obj[field];
    if (isObj(d)) out[field] = Object.fromEntries(Object.entries(d).map(([k, v]) => [k, maskValue(v)]));
    else if (d !== undefined) out[field] = maskValue(d); // invalid Secret: mask whatever is there
  }
  const md = obj.metadata;
  if (isObj(md) && isObj(md.annotations) && md.annotations[LAST_APPLIED] !== undefined) {
    out.metadata = {
      ...md,
      annotations: { ...md.annotations, [LAST_APPLIED]: maskValue(md.annotations[LAST_APPLIED]) },
    };
  }
  return out as T;
}
