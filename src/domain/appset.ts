// Argo CD ApplicationSets (issue 24): what their generators produce now, the Applications they own, and the
// shrink the applicationset-controller would carry out (delete the owned Applications no generator produces any
// more). Pure: the Git directory listing comes in from the caller. The console evaluates the list generator and
// the Git directory generator itself (Argo CD's semantics: `path.Match` globs per segment, later `exclude`
// entries win, fasttemplate `{{param}}` or goTemplate `{{.param}}` names); any other generator, a failed Git
// read or a template it cannot render makes the generated set `unknown`, and an unknown set never reads as
// "every Application removed".
import type { Obj } from './object-meta.ts';
import { withoutUserInfo } from './url-credentials.ts';

const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

export const RESOURCES_FINALIZER = 'resources-finalizer.argocd.argoproj.io';
/** The annotation that makes the applicationset-controller reconcile now (and re-read Git). */
export const APPSET_REFRESH_ANNOTATION = 'argocd.argoproj.io/application-set-refresh';

export interface GitDirectoriesGenerator {
  kind: 'git-directories';
  repoURL: string;
  revision: string;
  directories: Array<{ path: string; exclude: boolean }>;
}
export interface ListGenerator {
  kind: 'list';
  elements: Obj[];
}
export interface OtherGenerator {
  kind: 'other';
  name: string;
}
export type Generator = GitDirectoriesGenerator | ListGenerator | OtherGenerator;

export interface AppSetSpec {
  name: string;
  namespace: string;
  uid: string;
  goTemplate: boolean;
  generators: Generator[];
  /** metadata.name of the template (before rendering) */
  nameTemplate: string | null;
  preserveResourcesOnDeletion: boolean;
  /** the controller's sync policy for Applications: `sync` (create, update, delete) unless it says otherwise */
  applicationsSync: string;
  rollingSync: Array<{ matchExpressions: Obj[]; maxUpdate: string | number | null }> | null;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function parseAppSet(obj: unknown): AppSetSpec {
  const o = asObj(obj);
  const md = asObj(o.metadata);
  const spec = asObj(o.spec);
  const generators: Generator[] = (Array.isArray(spec.generators) ? (spec.generators as unknown[]) : []).map((g) => {
    const gen = asObj(g);
    if (gen.list !== undefined) {
      const l = asObj(gen.list);
      return { kind: 'list', elements: Array.isArray(l.elements) ? (l.elements as unknown[]).map(asObj) : [] };
    }
    const git = asObj(gen.git);
    if (gen.git !== undefined && Array.isArray(git.directories) && !git.files)
      return {
        kind: 'git-directories',
        repoURL: str(git.repoURL) ?? '',
        revision: str(git.revision) ?? 'HEAD',
        directories: (git.directories as unknown[]).map((d) => ({
          path: str(asObj(d).path) ?? '',
          exclude: asObj(d).exclude === true,
        })),
      };
    return { kind: 'other', name: Object.keys(gen).filter((k) => k !== 'selector')[0] ?? 'unnamed' };
  });
  const tmpl = asObj(asObj(spec.template).metadata);
  const syncPolicy = asObj(spec.syncPolicy);
  const strategy = asObj(spec.strategy);
  const rolling = strategy.type === 'RollingSync' ? asObj(strategy.rollingSync) : undefined;
  return {
    name: str(md.name) ?? '?',
    namespace: str(md.namespace) ?? 'argocd',
    uid: str(md.uid) ?? '',
    goTemplate: spec.goTemplate === true,
    generators,
    nameTemplate: str(tmpl.name) ?? null,
    preserveResourcesOnDeletion: syncPolicy.preserveResourcesOnDeletion === true,
    applicationsSync: str(syncPolicy.applicationsSync) ?? 'sync',
    rollingSync: rolling
      ? (Array.isArray(rolling.steps) ? (rolling.steps as unknown[]) : []).map((s) => {
          const st = asObj(s);
          const me = Array.isArray(st.matchExpressions) ? (st.matchExpressions as unknown[]).map(asObj) : [];
          const mu = st.maxUpdate;
          return { matchExpressions: me, maxUpdate: typeof mu === 'string' || typeof mu === 'number' ? mu : null };
        })
      : null,
  };
}

/** Whether the controller deletes Applications its generators no longer produce (applicationsSync `sync`). */
export function deletesApplications(s: AppSetSpec): boolean {
  return s.applicationsSync === 'sync';
}

/** Go's path.Match for one pattern against one path (`*` and `?` never cross `/`; `[...]` classes). */
export function pathMatch(pattern: string, path: string): boolean {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else if (ch === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) return false;
      let cls = pattern.slice(i + 1, end);
      if (cls.startsWith('^')) cls = '^' + cls.slice(1);
      re += `[${cls.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (ch === '\\' && i + 1 < pattern.length)
      re += (pattern[++i] as string).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else re += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  try {
    return new RegExp(re + '$').test(path);
  } catch {
    return false;
  }
}

/**
 * The directories a Git directory generator selects from all directories of the revision (Argo CD: a directory
 * matched by an include and by no exclude; hidden directories — a segment starting with `.` — are skipped).
 */
export function selectDirectories(g: GitDirectoriesGenerator, dirs: string[]): string[] {
  const includes = g.directories.filter((d) => !d.exclude).map((d) => d.path);
  const excludes = g.directories.filter((d) => d.exclude).map((d) => d.path);
  return dirs
    .filter((d) => !d.split('/').some((seg) => seg.startsWith('.')))
    .filter((d) => includes.some((p) => pathMatch(p, d)) && !excludes.some((p) => pathMatch(p, d)))
    .sort();
}

export type Params = Record<string, unknown>;

/** The parameters Argo CD gives one directory (fasttemplate keys, or the goTemplate `path` object). */
export function directoryParams(dir: string, goTemplate: boolean): Params {
  const segments = dir.split('/');
  const basename = segments[segments.length - 1] ?? dir;
  const normalized = basename.replace(/[^a-zA-Z0-9-]/g, '-').toLowerCase();
  if (goTemplate) return { path: { path: dir, basename, basenameNormalized: normalized, filename: '', segments } };
  const p: Params = { path: dir, 'path.path': dir, 'path.basename': basename, 'path.basenameNormalized': normalized };
  segments.forEach((s, i) => (p[`path[${i}]`] = s));
  return p;
}

/** The list generator's parameters: each element's keys (nested objects flattened with dots, fasttemplate). */
export function listParams(el: Obj, goTemplate: boolean): Params {
  if (goTemplate) return el;
  const out: Params = {};
  const walk = (o: Obj, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      if (v && typeof v === 'object' && !Array.isArray(v)) walk(v as Obj, `${prefix}${k}.`);
      else out[`${prefix}${k}`] = typeof v === 'string' ? v : JSON.stringify(v);
    }
  };
  walk(el, '');
  return out;
}

export class TemplateError extends Error {}

/**
 * Renders a template string the way the controller does for the simple forms the console supports:
 * fasttemplate `{{ key }}` (a missing key stays as written, as in Argo CD) or goTemplate `{{ .a.b }}` lookups.
 * Anything else in a goTemplate (functions, pipelines) throws: the name is unknown.
 */
export function renderTemplate(t: string, params: Params, goTemplate: boolean): string {
  return t.replace(/\{\{(.*?)\}\}/g, (whole, inner: string) => {
    const key = inner.trim();
    if (!goTemplate) {
      const v = params[key];
      return v === undefined ? whole : String(v);
    }
    if (!/^(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(key))
      throw new TemplateError(`the goTemplate expression {{${inner}}} is not a plain lookup`);
    let v: unknown = params;
    for (const part of key.slice(1).split('.')) v = asObj(v)[part];
    if (v === undefined || v === null) throw new TemplateError(`{{${inner}}} has no value`);
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}

export interface GeneratorResult {
  kind: string;
  /** the parameter sets it produced; null: unknown */
  params: Params[] | null;
  /** why it is unknown */
  unknown?: string;
  /** what it read (repository and revision, directory patterns) */
  detail: string;
}

/**
 * Evaluates the generators. `dirs(repoURL, revision)` lists every directory of a revision (throws when Git cannot
 * be read: that generator is unknown).
 */
export async function evaluateGenerators(
  s: AppSetSpec,
  dirs: (repoURL: string, revision: string) => Promise<string[]>,
): Promise<GeneratorResult[]> {
  const out: GeneratorResult[] = [];
  for (const g of s.generators) {
    if (g.kind === 'list')
      out.push({
        kind: 'list',
        params: g.elements.map((e) => listParams(e, s.goTemplate)),
        detail: `${g.elements.length} element${g.elements.length === 1 ? '' : 's'}`,
      });
    else if (g.kind === 'git-directories') {
      const shown = withoutUserInfo(g.repoURL);
      const detail = `${shown} at ${g.revision}: ${g.directories.map((d) => (d.exclude ? `!${d.path}` : d.path)).join(', ')}`;
      try {
        const selected = selectDirectories(g, await dirs(g.repoURL, g.revision));
        out.push({ kind: 'git-directories', params: selected.map((d) => directoryParams(d, s.goTemplate)), detail });
      } catch (e) {
        out.push({
          kind: 'git-directories',
          params: null,
          unknown: `reading ${shown} at ${g.revision} failed: ${e instanceof Error ? e.message : String(e)}`,
          detail,
        });
      }
    } else
      out.push({
        kind: g.name,
        params: null,
        unknown: `the console does not evaluate ${g.name} generators`,
        detail: g.name,
      });
  }
  return out;
}

/** The Application names the generators produce now, or why that is unknown. */
export function generatedNames(
  s: AppSetSpec,
  results: GeneratorResult[],
): { names: string[]; unknown: null } | { names: null; unknown: string } {
  const why = results.find((r) => r.params === null);
  if (why) return { names: null, unknown: why.unknown ?? `the ${why.kind} generator is unknown` };
  if (!s.nameTemplate) return { names: null, unknown: 'the template has no metadata.name' };
  const names = new Set<string>();
  try {
    for (const r of results) for (const p of r.params ?? []) names.add(renderTemplate(s.nameTemplate, p, s.goTemplate));
  } catch (e) {
    return { names: null, unknown: e instanceof Error ? e.message : String(e) };
  }
  return { names: [...names].sort(), unknown: null };
}

export interface OwnedApplication {
  name: string;
  namespace: string;
  uid: string;
  finalizers: string[];
  /** status.resources: what its resources finalizer deletes with it */
  resources: Array<{ group: string; version: string; kind: string; namespace?: string; name: string }>;
}

/** The Applications an ApplicationSet owns (an ownerReference to its uid, or by name and kind when uid-less). */
export function ownedBy(s: AppSetSpec, apps: unknown[]): OwnedApplication[] {
  const out: OwnedApplication[] = [];
  for (const a of apps) {
    const o = asObj(a);
    const md = asObj(o.metadata);
    const refs = Array.isArray(md.ownerReferences) ? (md.ownerReferences as unknown[]).map(asObj) : [];
    if (
      str(md.namespace) !== s.namespace ||
      !refs.some((r) => r.kind === 'ApplicationSet' && (s.uid ? r.uid === s.uid : r.name === s.name))
    )
      continue;
    const st = asObj(o.status);
    out.push({
      name: str(md.name) ?? '?',
      namespace: str(md.namespace) ?? s.namespace,
      uid: str(md.uid) ?? '',
      finalizers: Array.isArray(md.finalizers) ? (md.finalizers as unknown[]).filter((f) => typeof f === 'string') : [],
      resources: (Array.isArray(st.resources) ? (st.resources as unknown[]) : []).flatMap((r) => {
        const x = asObj(r);
        const name = str(x.name);
        const kind = str(x.kind);
        if (!name || !kind) return [];
        return [
          {
            group: str(x.group) ?? '',
            version: str(x.version) ?? 'v1',
            kind,
            ...(str(x.namespace) ? { namespace: str(x.namespace) } : {}),
            name,
          },
        ];
      }),
    });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export interface ShrinkItem {
  name: string;
  uid: string;
  /** its resources finalizer deletes its live objects with it (not preserved) */
  cascades: boolean;
  resources: OwnedApplication['resources'];
}

export interface Shrink {
  state: 'unknown' | 'nothing' | 'shrink';
  reasons: string[];
  removed: ShrinkItem[];
  owned: number;
}

/**
 * What the controller would delete: the owned Applications no generator produces any more. Unknown when the
 * generated set is unknown; `nothing` when the controller does not delete (applicationsSync other than `sync`).
 */
export function shrinkOf(
  s: AppSetSpec,
  owned: OwnedApplication[],
  generated: ReturnType<typeof generatedNames>,
): Shrink {
  if (generated.names === null)
    return {
      state: 'unknown',
      reasons: [`what the generators produce is unknown, so nothing is planned: ${generated.unknown}`],
      removed: [],
      owned: owned.length,
    };
  if (!deletesApplications(s))
    return {
      state: 'nothing',
      reasons: [`applicationsSync is ${s.applicationsSync}: the controller deletes no Application`],
      removed: [],
      owned: owned.length,
    };
  const keep = new Set(generated.names);
  const removed = owned
    .filter((a) => !keep.has(a.name))
    .map((a) => ({
      name: a.name,
      uid: a.uid,
      // the controller adds the finalizer unless preserveResourcesOnDeletion; what is on the object decides
      cascades: a.finalizers.includes(RESOURCES_FINALIZER),
      resources: a.resources,
    }));
  const reasons: string[] = [];
  if (generated.names.length === 0 && owned.length > 0)
    reasons.push(`the generators produce no Application: all ${owned.length} would be deleted`);
  return { state: removed.length ? 'shrink' : 'nothing', reasons, removed, owned: owned.length };
}

/** An ApplicationSet's limits: the share of its Applications one approval may remove, and the object count. */
export const DEFAULT_APPSET_LIMITS = { maxDeletions: 50, maxFraction: 0.5 };
