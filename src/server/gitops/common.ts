import type { App, Condition } from '../../domain/app.ts';
import { FREEZE_ANNOTATIONS } from '../../domain/freeze.ts';

export type Obj = Record<string, unknown>;

export const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function conditionsOf(o: Obj): Condition[] {
  const c = asObj(o.status).conditions;
  if (!Array.isArray(c)) return [];
  return c
    .map(asObj)
    .filter((x) => typeof x.type === 'string')
    .map((x) => ({
      type: String(x.type),
      status: String(x.status ?? 'Unknown'),
      ...(str(x.reason) ? { reason: str(x.reason) } : {}),
      ...(str(x.message) ? { message: str(x.message) } : {}),
      ...(str(x.lastTransitionTime) ? { lastTransitionTime: str(x.lastTransitionTime) } : {}),
    }));
}

/** Environment: the configured label on the app object, else the given fallback namespace, else the cluster. */
export function envOf(metadata: Obj, label: string, fallbackNamespace: string | undefined, cluster: string): string {
  const labels = asObj(metadata.labels);
  return str(labels[label]) ?? fallbackNamespace ?? cluster;
}

/** The freeze an app object carries (the console's annotations), if any. */
export function freezeOf(metadata: Obj): App['freeze'] | undefined {
  const a = asObj(metadata.annotations);
  const id = str(a[FREEZE_ANNOTATIONS.id]);
  if (!id) return undefined;
  const incident = str(a[FREEZE_ANNOTATIONS.incident]);
  return {
    id,
    by: str(a[FREEZE_ANNOTATIONS.by]) ?? 'unknown',
    reason: str(a[FREEZE_ANNOTATIONS.reason]) ?? '',
    until: str(a[FREEZE_ANNOTATIONS.until]) ?? '',
    ...(incident ? { incident } : {}),
  };
}
