// Objects in environments a reader may not read (issue 40, item 8). An app's diff and tree can hold objects in
// another environment's namespace: a dev Git writer renders one into staging's namespace, or a live object in
// staging carries the dev app's tracking label. Such an object belongs to the environment the console's mapping
// (CONSOLE_ENVIRONMENTS) gives its namespace — a Namespace object to the one its own name maps to — never to the
// app whose label it carries. What a reader may not read is left out and counted, never dropped silently.
// Pure: the caller gives the mapping and the reader's grants.
import type { ObjectRef } from './refs.ts';

/** The namespace that decides an object's environment: its own, or a Namespace object's name; none: cluster-scoped. */
export function deciding(ref: Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>): string | undefined {
  if (ref.namespace) return ref.namespace;
  return ref.kind === 'Namespace' && !ref.group ? ref.name : undefined;
}

/**
 * The environment the mapping gives an object (by `deciding`), or undefined when nothing decides it: no mapping is
 * configured (`envOfNamespace` answers undefined), or the object is cluster-scoped and not a Namespace.
 */
export function objectEnv(
  ref: Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>,
  envOfNamespace: (namespace: string) => string | undefined,
): string | undefined {
  const ns = deciding(ref);
  return ns ? envOfNamespace(ns) : undefined;
}

/** `items` split by whether the mapping puts each one's object in an environment the reader may read. */
export function splitByEnv<T>(
  items: readonly T[],
  refOf: (item: T) => Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>,
  envOfNamespace: (namespace: string) => string | undefined,
  mayRead: (env: string) => boolean,
): { visible: T[]; hidden: T[] } {
  const visible: T[] = [];
  const hidden: T[] = [];
  const answers = new Map<string, boolean>();
  for (const item of items) {
    const env = objectEnv(refOf(item), envOfNamespace);
    let ok = env === undefined;
    if (env !== undefined) {
      const known = answers.get(env);
      ok = known ?? mayRead(env);
      answers.set(env, ok);
    }
    (ok ? visible : hidden).push(item);
  }
  return { visible, hidden };
}

/** "3 objects in environments you may not read are hidden" (the line shown where the rows are). */
export function hiddenEnvLine(n: number): string {
  return n === 1
    ? '1 object in an environment you may not read is hidden'
    : `${n} objects in environments you may not read are hidden`;
}
