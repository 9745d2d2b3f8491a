// Secret values never leave the BFF. Masks are keyed HMACs: the same value
// gives the same mask and different values different masks (so a diff still
// shows *that* something changed), but a mask cannot be reversed or checked
// against guesses offline without the key.
//
// The key: random per process until `loadMaskKey(dataDir)` loads (or creates) the
// one kept owner-only in the data directory. A persisted key keeps masks, and the
// render hashes built from them, equal across restarts, so evidence can compare a
// render hash with last week's; with a per-process key every restart would make
// every app's render look new. Deleting the key file rotates it (every render hash
// changes once).
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { redactUrlCredentials } from '../../domain/url-credentials.ts';

let KEY = randomBytes(32);
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
export const MASK_KEY_FILE = 'mask.key';

/**
 * Uses the mask key in `keyFile` (CONSOLE_MASK_KEY_FILE: a mounted Secret, the same for every replica, so
 * masks and render hashes agree across them) or else in `<dataDir>/mask.key` (0600, in a 0700 directory),
 * creating that one on first start.
 */
export function loadMaskKey(dataDir: string, keyFile?: string): void {
  if (keyFile) {
    let given: string;
    try {
      given = readFileSync(keyFile, 'utf8').trim();
    } catch (e) {
      throw new Error(`CONSOLE_MASK_KEY_FILE ${keyFile}: ${(e as Error).message}`);
    }
    if (!/^[0-9a-f]{64}$/.test(given))
      throw new Error(`CONSOLE_MASK_KEY_FILE ${keyFile} is not a mask key (64 hex digits: openssl rand -hex 32)`);
    KEY = Buffer.from(given, 'hex');
    return;
  }
  if (!mkdirSync(dataDir, { recursive: true, mode: 0o700 })) {
    try {
      chmodSync(dataDir, 0o700);
    } catch {
      /* an existing directory we do not own (a mounted volume): its owner decides; the key file is 0600 */
    }
  }
  const file = join(dataDir, MASK_KEY_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (text === undefined) {
    try {
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (e) {
      // another process (the CLI, a second BFF on the same data dir) created it first: use theirs
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    text = readFileSync(file, 'utf8').trim();
  }
  if (!/^[0-9a-f]{64}$/.test(text))
    throw new Error(`${file} is not a mask key (64 hex digits); delete it to make a new one`);
  chmodSync(file, 0o600);
  KEY = Buffer.from(text, 'hex');
}

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

/**
 * Values shorter than this are not searched for in error text: masking every "true", "on" or "1" in a
 * message would make it unreadable and hide nothing worth hiding.
 */
export const MIN_MASKED_TEXT_LENGTH = 4;

const MASK_RE = /^<secret [0-9a-f]{12}>$/;
const base64Of = (s: string) => Buffer.from(s, 'utf8').toString('base64');
function decodedBase64(s: string): string | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return undefined;
  const d = Buffer.from(s, 'base64');
  const text = d.toString('utf8');
  // binary data (a keystore) is not quoted as text; a lossy decode would only add noise
  return Buffer.from(text, 'utf8').equals(d) ? text : undefined;
}

/** Every form in which an error text may quote this Secret's values, each with the mask the diff shows. */
function secretForms(obj: unknown, out: Map<string, string>, depth = 0): void {
  if (!isObj(obj) || depth > 4) return;
  if (obj.kind === 'List' && Array.isArray(obj.items)) {
    for (const i of obj.items) secretForms(i, out, depth + 1);
    return;
  }
  if (obj.kind !== 'Secret') return;
  const add = (form: string, mask: string) => {
    const candidates = [form, JSON.stringify(form).slice(1, -1), ...form.split('\n').map((l) => l.trim())];
    for (const c of candidates) if (c.length >= MIN_MASKED_TEXT_LENGTH && !out.has(c)) out.set(c, mask);
  };
  for (const field of ['data', 'stringData'] as const) {
    const d = obj[field];
    const entries = isObj(d) ? Object.values(d) : d === undefined ? [] : [d];
    for (const v of entries) {
      const raw = typeof v === 'string' ? v : JSON.stringify(v ?? null);
      const mask = maskValue(v);
      add(raw, mask);
      if (field === 'data') {
        const plain = decodedBase64(raw);
        if (plain !== undefined) add(plain, mask);
      } else add(base64Of(raw), mask);
    }
  }
  const md = obj.metadata;
  const last = isObj(md) && isObj(md.annotations) ? md.annotations[LAST_APPLIED] : undefined;
  if (typeof last === 'string') {
    add(last, maskValue(last));
    try {
      secretForms(JSON.parse(last) as unknown, out, depth + 1);
    } catch {
      /* not JSON: masked as a whole above */
    }
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const maskOf = (v: string) => (MASK_RE.test(v) ? v : maskValue(v.replace(/^(["'])(.*)\1$/s, '$2')));

/**
 * By shape, for values nobody told us about (a render that failed before its Secrets were known):
 * the values under `data:` / `stringData:` in YAML excerpts (block and flow style), JSON and Go map
 * dumps (`data:map[k:v]`), and the credentials in a URL's user-info. A ConfigMap's `data:` is
 * masked too: in an error message that costs some readability and hides nothing the diff would show.
 */
function maskSecretPatterns(text: string): string {
  let out = redactUrlCredentials(text, '<credentials>');
  // JSON / YAML flow maps: "data":{"k":"v"}  data: {k: v}  data:map[string]interface {}{"k":"v"}
  out = out.replace(
    /((["']?)\b(?:data|stringData)\2\s*:\s*(?:map\[string\][a-z]+(?: \{\})?)?\{)([^{}]*)(\})/g,
    (_m, open: string, _q: string, body: string, close: string) =>
      `${open}${body.replace(
        /((?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s,:{}"']+)\s*:\s*)("(?:[^"\\]|\\.)*"|'[^']*'|[^,}]*[^,}\s])/g,
        (_k, key: string, value: string) => `${key}${maskOf(value)}`,
      )}${close}`,
  );
  // Go map dumps: data:map[k:v k2:v2]
  out = out.replace(
    /\b((?:data|stringData):map\[)([^\]]*)(\])/g,
    (_m, open: string, body: string, close: string) =>
      `${open}${body.replace(/([^\s:]+:)(\S+)/g, (_k, key: string, value: string) => `${key}${maskOf(value)}`)}${close}`,
  );
  // YAML block maps: every line indented under `data:` / `stringData:`, values and continuation lines
  const lines = out.split('\n');
  let blockIndent = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const indent = /^\s*/.exec(line)?.[0].length ?? 0;
    if (blockIndent >= 0 && line.trim() !== '' && indent > blockIndent) {
      const kv = /^(\s*(?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s:"']+)\s*:)(\s+)(.*\S)\s*$/.exec(line);
      if (kv) {
        if (!/^[|>][-+0-9]*$/.test(kv[3] ?? '')) lines[i] = `${kv[1]}${kv[2]}${maskOf(kv[3] ?? '')}`;
      } else if (!/^\s*[^\s:]+:\s*$/.test(line)) lines[i] = `${' '.repeat(indent)}${maskOf(line.trim())}`;
      continue;
    }
    // the key's own column: in `- data:` the item's other keys sit at the same column and stay visible
    const head = /^(\s*(?:-\s+)?)(["']?)(?:data|stringData)\2\s*:\s*$/.exec(line);
    blockIndent = head ? (head[1] ?? '').length : -1;
  }
  return lines.join('\n');
}

/**
 * Masks Secret values in error text that is about to reach a user (a render error, a dry-run error):
 * every value of the Secrets in `known` (data and stringData, base64 and decoded, each line of a
 * multi-line value, JSON-escaped) of at least MIN_MASKED_TEXT_LENGTH characters becomes the mask the
 * diff shows for it, then whatever still looks like Secret data by shape is masked too.
 */
export function maskSecretsInText(text: string, known: readonly unknown[] = []): string {
  const forms = new Map<string, string>();
  for (const o of known) secretForms(o, forms);
  let out = text;
  if (forms.size) {
    // one pass, longest first: a value is never found again inside a mask put in for another
    const re = new RegExp(
      [...forms.keys()]
        .sort((a, b) => b.length - a.length)
        .map(escapeRe)
        .join('|'),
      'g',
    );
    out = out.replace(re, (m) => forms.get(m) ?? maskValue(m));
  }
  return maskSecretPatterns(out);
}
