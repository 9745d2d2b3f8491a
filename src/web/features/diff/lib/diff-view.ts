import type { FieldChangeDto, ObjectDiffDto } from '../../../../api/schemas.ts';
import { isGitOpsControllerManager, managerLabel } from '../../../../domain/field-managers.ts';
import { fieldPathToPointer } from '../../../../domain/managed-fields.ts';
import { lineOfPath } from './yaml-lines.ts';
import type { LineBadge } from '../../../components/editor/monaco-diff.tsx';
import { formatLocal } from '../../../components/time.tsx';

export interface DiffToggles {
  hideDefaulted: boolean;
  hideIgnored: boolean;
  onlyDrift: boolean;
}

export function visibleChanges(changes: FieldChangeDto[], t: DiffToggles): FieldChangeDto[] {
  return changes.filter(
    (c) =>
      (!t.hideDefaulted || c.class !== 'defaulted') &&
      (!t.hideIgnored || c.class !== 'ignored') &&
      (!t.onlyDrift || c.class === 'drift'),
  );
}

/** The manager to name on a change: the non-controller owner if any, else the controller. */
export function ownerLabel(c: FieldChangeDto): string {
  const other = c.owners.find((o) => !isGitOpsControllerManager(o.manager));
  return (other ?? c.owners[0])?.manager ?? 'no owner';
}

/**
 * The owner as its badge reads: {@link ownerLabel}, a progressive-delivery controller by its product name
 * ("Argo Rollouts", "Flagger"). The fix snippets keep the raw manager (Argo CD's managedFieldsManagers needs it).
 */
export function ownerBadge(c: FieldChangeDto): string {
  return managerLabel(ownerLabel(c));
}

/** `timeZone`: the user's unless given (tests) */
export function ownerHover(c: FieldChangeDto, timeZone?: string): string {
  if (!c.owners.length) return 'no field manager owns this field';
  return c.owners
    .map(
      (o) =>
        `${o.manager}: ${o.operation}${o.subresource ? ` on /${o.subresource}` : ''}${o.time ? ` at ${formatLocal(o.time, timeZone)}` : ''}`,
    )
    .join('\n\n');
}

export function lineBadges(o: ObjectDiffDto, changes: FieldChangeDto[]): LineBadge[] {
  const text = o.liveYaml ?? '';
  return changes
    .map((c) => ({
      line: lineOfPath(text, c.path),
      label: `${ownerBadge(c)} · ${c.class}`,
      hover: `**${c.path}**\n\n${ownerHover(c)}`,
      tone: c.class === 'drift' || c.class === 'pending' || c.class === 'conflict' ? c.class : ('other' as const),
    }))
    .filter((b) => b.line > 0);
}

/** The ready-to-copy fix for a conflict: an Argo CD ignoreDifferences entry, or for Flux the two honest options. */
export function fixFor(
  controller: 'flux' | 'argocd',
  target: { group: string; kind: string; name: string },
  path: string,
  manager: string,
): string {
  // a pointer needs list indexes, which a keyed path does not carry: then only the manager rule is offered
  const pointer = fieldPathToPointer(path);
  if (controller === 'argocd') {
    return `spec:\n  ignoreDifferences:\n    - group: "${target.group}"\n      kind: ${target.kind}\n      name: ${target.name}\n      managedFieldsManagers:\n        - ${manager}${pointer === undefined ? '' : `\n      # or: jsonPointers: [${JSON.stringify(pointer)}]`}`;
  }
  return `# Flux: stop declaring ${path} in Git (remove it from the manifest), or let ${manager} keep the object's fields:\nmetadata:\n  annotations:\n    kustomize.toolkit.fluxcd.io/ssa: IfNotPresent   # on ${target.kind}/${target.name}: Flux creates it, never overrides it`;
}

export function fixSnippet(controller: 'flux' | 'argocd', o: ObjectDiffDto, c: FieldChangeDto): string {
  return fixFor(controller, o.ref, c.path, ownerLabel(c));
}
