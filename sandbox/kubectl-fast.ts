// The kubectl commands the scenario helpers and tests run most (get, patch, annotate, label, delete, server-side
// apply), done as REST requests through kube-sync.ts instead of a kubectl process; the output and the errors
// read as kubectl's. Any command, flag or form not mapped here returns undefined and the caller runs kubectl, so
// a test never depends on which path ran. SANDBOX_KUBECTL=spawn turns the mapping off.
//
// Kept as kubectl does it: the default field managers (kubectl-patch, kubectl-annotate, kubectl-label, kubectl
// for apply), the default namespace "default", background cascading on delete and waiting until the object is
// gone (--wait, the default), managedFields hidden unless --show-managed-fields, lists as `kind: List` with each
// item's apiVersion and kind, `Error from server (Reason): message`.
import { readFileSync, statSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { type ApiResource, type KubeTarget, discover, requestSync, targetOf } from './kube-sync.ts';

type Json = Record<string, unknown>;

const VALUE_FLAGS: Record<string, string> = {
  '-n': 'namespace',
  '--namespace': 'namespace',
  '-o': 'output',
  '--output': 'output',
  '-l': 'selector',
  '--selector': 'selector',
  '--type': 'type',
  '-p': 'patch',
  '--patch': 'patch',
  '--field-manager': 'field-manager',
  '--subresource': 'subresource',
  '-f': 'filename',
  '--filename': 'filename',
  '--timeout': 'timeout',
};
const BOOL_FLAGS: Record<string, string> = {
  '--show-managed-fields': 'show-managed-fields',
  '--ignore-not-found': 'ignore-not-found',
  '--overwrite': 'overwrite',
  '--server-side': 'server-side',
  '--force-conflicts': 'force-conflicts',
  '-A': 'all-namespaces',
  '--all-namespaces': 'all-namespaces',
  '--wait': 'wait',
};

interface Cmd {
  verb: string;
  pos: string[];
  flags: Map<string, string | boolean>;
  files: string[];
}

/** kubectl's arguments, or undefined for a flag this does not map. */
export function parseKubectlArgs(args: string[]): Cmd | undefined {
  const pos: string[] = [];
  const flags = new Map<string, string | boolean>();
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('-') || a === '-') {
      pos.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const [name, inline] = eq > 0 && a.startsWith('--') ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
    if (VALUE_FLAGS[name]) {
      const v = inline ?? args[++i];
      if (v === undefined) return undefined;
      if (VALUE_FLAGS[name] === 'filename') files.push(v);
      else flags.set(VALUE_FLAGS[name], v);
    } else if (BOOL_FLAGS[name]) {
      if (inline !== undefined && inline !== 'true' && inline !== 'false') return undefined;
      flags.set(BOOL_FLAGS[name], inline !== 'false');
    } else return undefined;
  }
  const [verb, ...rest] = pos;
  if (!verb) return undefined;
  return { verb, pos: rest, flags, files };
}

class Kube {
  constructor(readonly target: KubeTarget) {}

  resolve(name: string): ApiResource | undefined {
    const n = name.toLowerCase();
    const find = (all: ApiResource[]) =>
      all.find((r) => [r.resource, r.singular, r.kind.toLowerCase(), ...r.shortNames].includes(n)) ??
      all.find((r) =>
        [r.resource, r.singular, r.kind.toLowerCase()].some(
          (x) => n === `${x}.${r.group}` || n === `${x}.${r.version}.${r.group}`,
        ),
      );
    return find(discover(this.target)) ?? find(discover(this.target, true));
  }

  byKind(apiVersion: string, kind: string): ApiResource | undefined {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    const find = (all: ApiResource[]) => all.find((r) => r.group === group && r.version === version && r.kind === kind);
    return find(discover(this.target)) ?? find(discover(this.target, true));
  }

  request(method: string, path: string, body?: unknown, contentType = 'application/json') {
    const r = requestSync(this.target, method, path, {
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      contentType: body === undefined ? undefined : contentType,
    });
    let parsed: Json | undefined;
    try {
      parsed = r.body ? (JSON.parse(r.body) as Json) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: r.status, obj: parsed, text: r.body };
  }
}

/** What kubectl prints for a failed request. */
function serverError(status: number, obj: Json | undefined, text: string): Error {
  if (obj?.kind === 'Status') {
    const details = obj.details as Json | undefined;
    const invalid = obj.reason === 'Invalid' ? / is invalid: ([\s\S]*)$/.exec(String(obj.message ?? '')) : null;
    if (invalid && details?.kind)
      return new Error(`The ${String(details.kind)} "${String(details.name)}" is invalid: ${invalid[1]}`);
    const reason = obj.reason ? ` (${String(obj.reason)})` : '';
    return new Error(`Error from server${reason}: ${String(obj.message ?? `HTTP ${status}`)}`);
  }
  return new Error(`Error from server: HTTP ${status}: ${text.slice(0, 500)}`);
}

const ok = (s: number) => s >= 200 && s < 300;
const ref = (r: ApiResource) => r.kind.toLowerCase() + (r.group ? `.${r.group}` : '');
const enc = encodeURIComponent;

function collectionPath(r: ApiResource, ns: string | undefined): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return `${base}${r.namespaced && ns ? `/namespaces/${enc(ns)}` : ''}/${r.resource}`;
}

function hideManagedFields(o: Json, show: boolean): Json {
  if (show || !o.metadata) return o;
  const { managedFields: _, ...metadata } = o.metadata as Json;
  return { ...o, metadata };
}

/** `-o jsonpath={.a.b}`: one plain field path (dots escaped as `\\.`), no ranges, filters or text */
const FIELD_PATH = /^jsonpath=\{\.((?:[^{}[\]\\.]|\\\.)+(?:\.(?:[^{}[\]\\.]|\\\.)+)*)\}$/;

/** whether print() can print this `-o` (for lists: json and name only) */
const printable = (output: string | boolean | undefined, list = false): boolean =>
  output === 'json' || output === 'name' || (!list && typeof output === 'string' && FIELD_PATH.test(output));

/** kubectl's `-o` for one object or a list: json, name, or a jsonpath of one plain field path. */
function print(output: string | boolean | undefined, r: ApiResource, o: Json, show: boolean): string | undefined {
  const name = (x: Json) => `${ref(r)}/${String((x.metadata as Json | undefined)?.name ?? '')}`;
  const items = Array.isArray(o.items) ? (o.items as Json[]) : undefined;
  if (output === 'json') {
    if (!items) return `${JSON.stringify(hideManagedFields(o, show), null, 4)}\n`;
    const apiVersion = r.group ? `${r.group}/${r.version}` : r.version;
    const list = items.map((i) => ({ apiVersion, kind: r.kind, ...hideManagedFields(i, show) }));
    return `${JSON.stringify({ apiVersion: 'v1', items: list, kind: 'List', metadata: { resourceVersion: '' } }, null, 4)}\n`;
  }
  if (output === 'name') return items ? items.map((i) => `${name(i)}\n`).join('') : `${name(o)}\n`;
  const m = typeof output === 'string' && !items ? FIELD_PATH.exec(output) : null;
  if (!m) return undefined;
  let v: unknown = o;
  for (const seg of m[1]!.split(/(?<!\\)\./)) v = (v as Json | undefined)?.[seg.replace(/\\\./g, '.')];
  if (v === undefined || v === null) return '';
  return typeof v === 'object' ? sortedJson(v) : String(v);
}

/** Go's json.Marshal of a map: keys sorted. */
function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson((v as Json)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** [resource, name] from `kind name` or `kind/name`; undefined for lists of kinds or several names. */
function target(pos: string[], needName: boolean): { res: string; name?: string; rest: string[] } | undefined {
  const [first, ...rest] = pos;
  if (!first || first.includes(',')) return undefined;
  if (first.includes('/')) {
    const [res, name, extra] = first.split('/');
    return extra === undefined && res && name ? { res, name, rest } : undefined;
  }
  const [name, ...after] = rest;
  if (needName && !name) return undefined;
  return { res: first, name, rest: after };
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function seconds(v: string | boolean | undefined, dflt: number): number {
  const m = typeof v === 'string' ? /^(\d+)(ms|s|m)?$/.exec(v) : null;
  if (!m) return dflt;
  const n = Number(m[1]);
  return m[2] === 'ms' ? n / 1000 : m[2] === 'm' ? n * 60 : n;
}

/**
 * The output of `kubectl --kubeconfig <kubeconfig> <args>`, done in process; undefined when the command is not one
 * this maps (the caller then runs kubectl). Throws what kubectl would print on a failure.
 */
export function fastKubectl(kubeconfig: string, args: string[], input?: string): string | undefined {
  if (process.env.SANDBOX_KUBECTL === 'spawn') return undefined;
  const cmd = parseKubectlArgs(args);
  if (!cmd) return undefined;
  const t = targetOf(kubeconfig);
  if (!t) return undefined;
  const kube = new Kube(t);
  switch (cmd.verb) {
    case 'get':
      return get(kube, cmd);
    case 'patch':
      return patch(kube, cmd);
    case 'annotate':
    case 'label':
      return annotate(kube, cmd);
    case 'delete':
      return del(kube, cmd);
    case 'apply':
      return apply(kube, cmd, input);
    default:
      return undefined;
  }
}

function only(cmd: Cmd, allowed: string[]): boolean {
  return (
    [...cmd.flags.keys()].every((k) => allowed.includes(k)) && (cmd.files.length === 0 || allowed.includes('filename'))
  );
}

function get(kube: Kube, cmd: Cmd): string | undefined {
  if (!only(cmd, ['namespace', 'output', 'selector', 'show-managed-fields', 'ignore-not-found', 'all-namespaces']))
    return undefined;
  const tg = target(cmd.pos, false);
  const output = cmd.flags.get('output');
  if (!tg || tg.rest.length || output === undefined) return undefined;
  if (tg.name && (cmd.flags.has('selector') || cmd.flags.get('all-namespaces'))) return undefined;
  const r = kube.resolve(tg.res);
  if (!r) return undefined;
  const show = cmd.flags.get('show-managed-fields') === true;
  const ns = cmd.flags.get('all-namespaces') ? undefined : String(cmd.flags.get('namespace') ?? 'default');
  if (tg.name) {
    if (!printable(output)) return undefined;
    const res = kube.request('GET', `${collectionPath(r, ns)}/${enc(tg.name)}`);
    if (res.status === 404 && cmd.flags.get('ignore-not-found')) return '';
    if (!ok(res.status) || !res.obj) throw serverError(res.status, res.obj, res.text);
    return print(output, r, res.obj, show);
  }
  if (!printable(output, true)) return undefined;
  const sel = cmd.flags.get('selector');
  const q = typeof sel === 'string' ? `?labelSelector=${enc(sel)}` : '';
  const res = kube.request('GET', collectionPath(r, ns) + q);
  if (!ok(res.status) || !res.obj) throw serverError(res.status, res.obj, res.text);
  return print(output, r, res.obj, show);
}

const PATCH_TYPES: Record<string, string> = {
  strategic: 'application/strategic-merge-patch+json',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

function patch(kube: Kube, cmd: Cmd): string | undefined {
  if (!only(cmd, ['namespace', 'output', 'type', 'patch', 'field-manager', 'subresource', 'show-managed-fields']))
    return undefined;
  const tg = target(cmd.pos, true);
  const type = PATCH_TYPES[String(cmd.flags.get('type') ?? 'strategic')];
  const body = cmd.flags.get('patch');
  const output = cmd.flags.get('output');
  if (!tg?.name || tg.rest.length || !type || typeof body !== 'string') return undefined;
  const r = kube.resolve(tg.res);
  if (!r || (output !== undefined && !printable(output))) return undefined;
  const sub = cmd.flags.get('subresource');
  const path = `${collectionPath(r, String(cmd.flags.get('namespace') ?? 'default'))}/${enc(tg.name)}${typeof sub === 'string' ? `/${sub}` : ''}`;
  const fm = String(cmd.flags.get('field-manager') ?? 'kubectl-patch');
  const res = kube.request('PATCH', `${path}?fieldManager=${enc(fm)}`, body, type);
  if (!ok(res.status) || !res.obj) throw serverError(res.status, res.obj, res.text);
  if (output !== undefined) return print(output, r, res.obj, cmd.flags.get('show-managed-fields') === true);
  return `${sub === 'scale' ? 'scale.autoscaling' : ref(r)}/${tg.name} patched\n`;
}

function annotate(kube: Kube, cmd: Cmd): string | undefined {
  // without --overwrite kubectl refuses to change a key that has a value: left to kubectl
  if (!only(cmd, ['namespace', 'overwrite']) || cmd.flags.get('overwrite') !== true) return undefined;
  const tg = target(cmd.pos, true);
  if (!tg?.name || tg.rest.length === 0) return undefined;
  const changes: Record<string, string | null> = {};
  for (const kv of tg.rest) {
    const eq = kv.indexOf('=');
    if (eq > 0) changes[kv.slice(0, eq)] = kv.slice(eq + 1);
    else if (kv.endsWith('-') && kv.length > 1) changes[kv.slice(0, -1)] = null;
    else return undefined;
  }
  const r = kube.resolve(tg.res);
  if (!r) return undefined;
  const field = cmd.verb === 'label' ? 'labels' : 'annotations';
  const path = `${collectionPath(r, String(cmd.flags.get('namespace') ?? 'default'))}/${enc(tg.name)}`;
  const res = kube.request(
    'PATCH',
    `${path}?fieldManager=kubectl-${cmd.verb}`,
    { metadata: { [field]: changes } },
    PATCH_TYPES.merge,
  );
  if (!ok(res.status)) throw serverError(res.status, res.obj, res.text);
  return `${ref(r)}/${tg.name} ${cmd.verb === 'label' ? 'labeled' : 'annotated'}\n`;
}

function del(kube: Kube, cmd: Cmd): string | undefined {
  if (!only(cmd, ['namespace', 'ignore-not-found', 'wait', 'timeout'])) return undefined;
  // `kind name`, or any number of `kind/name`
  const many = cmd.pos.length > 1 && cmd.pos.every((p) => p.includes('/'));
  const targets = many ? cmd.pos.map((p) => target([p], true)) : [target(cmd.pos, true)];
  const resolved: Array<{ r: ApiResource; name: string }> = [];
  for (const tg of targets) {
    const r = tg?.name && !tg.rest.length ? kube.resolve(tg.res) : undefined;
    if (!r || !tg?.name) return undefined;
    resolved.push({ r, name: tg.name });
  }
  const out: string[] = [];
  const errors: string[] = [];
  for (const { r, name } of resolved)
    try {
      out.push(deleteOne(kube, cmd, r, name));
    } catch (e) {
      errors.push((e as Error).message);
    }
  if (errors.length) throw new Error(errors.join('\n'));
  return out.join('');
}

function deleteOne(kube: Kube, cmd: Cmd, r: ApiResource, name: string): string {
  const ns = String(cmd.flags.get('namespace') ?? 'default');
  const path = `${collectionPath(r, ns)}/${enc(name)}`;
  const res = kube.request('DELETE', path, {
    kind: 'DeleteOptions',
    apiVersion: 'v1',
    propagationPolicy: 'Background',
  });
  if (res.status === 404 && cmd.flags.get('ignore-not-found')) return '';
  if (!ok(res.status)) throw serverError(res.status, res.obj, res.text);
  const done = `${ref(r)} "${name}" deleted${r.namespaced ? ` from ${ns} namespace` : ''}\n`;
  const uid = res.obj?.kind === r.kind ? (res.obj.metadata as Json | undefined)?.uid : undefined;
  if (cmd.flags.get('wait') === false || uid === undefined) return done;
  // kubectl's --wait: until the object (this uid) is gone; --timeout, else 60 s as the spawned kubectl had
  const deadline = Date.now() + seconds(cmd.flags.get('timeout'), 60) * 1000;
  for (let pause = 50; ; pause = Math.min(pause * 2, 500)) {
    const g = kube.request('GET', path);
    if (g.status === 404 || (ok(g.status) && (g.obj?.metadata as Json | undefined)?.uid !== uid)) return done;
    if (!ok(g.status)) throw serverError(g.status, g.obj, g.text);
    if (Date.now() > deadline) throw new Error(`error: timed out waiting for the condition on ${ref(r)}/${name}`);
    sleepSync(pause);
  }
}

function apply(kube: Kube, cmd: Cmd, input: string | undefined): string | undefined {
  if (!only(cmd, ['server-side', 'field-manager', 'force-conflicts', 'namespace', 'filename'])) return undefined;
  if (cmd.flags.get('server-side') !== true || cmd.files.length === 0 || cmd.pos.length) return undefined;
  const texts: string[] = [];
  for (const f of cmd.files) {
    if (f === '-') {
      if (input === undefined) return undefined;
      texts.push(input);
    } else if (statSync(f, { throwIfNoEntry: false })?.isFile()) texts.push(readFileSync(f, 'utf8'));
    else return undefined;
  }
  // every document resolved before the first is sent: an unknown kind leaves the whole command to kubectl
  const docs: Array<{ r: ApiResource; name: string; ns?: string; text: string }> = [];
  for (const src of texts)
    for (const d of parseAllDocuments(src)) {
      if (d.errors.length) return undefined;
      const o = d.toJS() as Json | null;
      if (o === null || o === undefined) continue;
      const meta = o.metadata as Json | undefined;
      if (typeof o.apiVersion !== 'string' || typeof o.kind !== 'string' || typeof meta?.name !== 'string')
        return undefined;
      if (o.kind.endsWith('List')) return undefined;
      const r = kube.byKind(o.apiVersion, o.kind);
      if (!r) return undefined;
      const ns = r.namespaced ? String(meta.namespace ?? cmd.flags.get('namespace') ?? 'default') : undefined;
      // the document's own text: the apiserver parses it as kubectl would have
      docs.push({ r, name: meta.name, ns, text: src.slice(d.range[0], d.range[2]) });
    }
  const fm = String(cmd.flags.get('field-manager') ?? 'kubectl');
  const force = cmd.flags.get('force-conflicts') === true ? '&force=true' : '';
  const out: string[] = [];
  const errors: string[] = [];
  for (const d of docs) {
    const path = `${collectionPath(d.r, d.ns)}/${enc(d.name)}?fieldManager=${enc(fm)}${force}`;
    const res = kube.request('PATCH', path, d.text, 'application/apply-patch+yaml');
    if (ok(res.status)) out.push(`${ref(d.r)}/${d.name} serverside-applied\n`);
    else if (res.status === 409 && /^Apply failed with/.test(String(res.obj?.message)))
      errors.push(`${String(res.obj?.message)}\n${CONFLICT_HELP}`);
    else errors.push(serverError(res.status, res.obj, res.text).message);
  }
  // as kubectl: what was applied goes to its standard output, lost with the failure; the failures are the error
  if (errors.length) throw new Error(errors.join('\n'));
  return out.join('');
}

/** kubectl's words after a server-side apply conflict, verbatim (tests compare the two paths' errors). */
const CONFLICT_HELP = `Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the \`--force-conflicts\` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts`;
