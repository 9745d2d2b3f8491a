// An app's diff as one reader may see it (issue 40, item 8): a row whose object the console's mapping puts in an
// environment the reader may not read — a dev app's render with an object in staging's namespace, or a live object
// in staging carrying the dev app's label — is left out with its Git and live YAML, and counted
// (`hiddenByEnvironment`). The diff is computed once for everyone (service.ts); this runs per request, after it.
import type { ObjectRef } from '../../domain/refs.ts';
import { emptyRenderSummary, OWNERSHIP_BY_OBJECT, summarizeDiff, type ObjectStatus } from './app-diff.ts';
import type { DiffResult } from './service.ts';

type Ref = Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>;

/** How the diff engine names an object in ownership conflicts and prune reasons: "ConfigMap dev/settings". */
const label = (r: Ref) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;

/**
 * `d` without the rows `hides` says the reader may not see: counts and summary of the rows shown, ownership
 * totals and conflicts without the hidden objects' fields (a manager seen only on them is left out), prune reasons
 * naming a hidden object left out, Secrets in Git of a hidden namespace left out.
 * `controllerPrunes`: the app's own prune setting (the empty-render summary's words). Unchanged when none is hidden.
 */
export function diffSeenBy(
  d: DiffResult,
  hides: (ref: Ref) => boolean,
  controllerPrunes: boolean,
): DiffResult & { hiddenByEnvironment?: number } {
  const hidden = d.objects.filter((o) => hides(o.ref));
  if (!hidden.length) return d;
  const objects = d.objects.filter((o) => !hides(o.ref));
  const names = new Set(hidden.map((o) => label(o.ref)));
  const counts: Record<ObjectStatus, number> = {
    changed: 0,
    missing: 0,
    extraneous: 0,
    unchanged: 0,
    unknown: 0,
    hook: 0,
  };
  for (const o of objects) counts[o.status]++;
  const summary =
    d.emptyRender && d.prune
      ? `${emptyRenderSummary(d.prune.deletions, d.prune.protected, controllerPrunes)}; ${summarizeDiff(objects)}`
      : summarizeDiff(objects);
  const render = d.render?.secretsInGit
    ? {
        ...d.render,
        secretsInGit: d.render.secretsInGit.filter(
          (s) =>
            !hides({ group: '', kind: 'Secret', ...(s.namespace ? { namespace: s.namespace } : {}), name: s.name }),
        ),
      }
    : d.render;
  return {
    ...d,
    ...(render ? { render } : {}),
    objects,
    counts,
    summary,
    ownership: ownershipWithout(d, names),
    ...(d.prune
      ? {
          prune: { ...d.prune, reasons: d.prune.reasons.filter((r) => ![...names].some((n) => r.startsWith(`${n} `))) },
        }
      : {}),
    hiddenByEnvironment: hidden.length,
  };
}

/** The ownership table less the hidden objects' shares: fields and objects counted, conflicts naming them. */
function ownershipWithout(d: DiffResult, names: Set<string>): DiffResult['ownership'] {
  const shares = d[OWNERSHIP_BY_OBJECT];
  const less = new Map<string, { fields: number; objects: number }>();
  for (const n of names)
    for (const [m, fields] of shares?.get(n) ?? []) {
      const l = less.get(m) ?? { fields: 0, objects: 0 };
      less.set(m, { fields: l.fields + fields, objects: l.objects + 1 });
    }
  return d.ownership
    .map((row) => ({
      ...row,
      fields: row.fields - (less.get(row.manager)?.fields ?? 0),
      objects: row.objects - (less.get(row.manager)?.objects ?? 0),
      conflicts: row.conflicts.filter((c) => !names.has(c.object)),
    }))
    .filter((row) => row.objects > 0);
}
