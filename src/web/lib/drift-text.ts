// How drift reads in the SPA (card, app header, tree row): plain functions, unit-tested.
// "drifted 40 s ago by kubectl-scale: spec.replicas 1 → 3"; a conflict names the other controller.
import type { AppDto, NodeDriftDto, TreeNodeDto } from '../../api/schemas.ts';

type AppDrift = NonNullable<AppDto['drift']>;
type Field = NodeDriftDto['fields'][number];

const MAX_VALUE = 24;

/** A value as the drift line shows it: compact, one line, cut at 24 characters; absent is "∅". */
export function compactValue(v: unknown): string {
  if (v === undefined) return '∅';
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  const one = s.replace(/\s+/g, ' ');
  return one.length > MAX_VALUE ? `${one.slice(0, MAX_VALUE - 1)}…` : one;
}

/** "spec.replicas 1 → 3" */
export function fieldChange(f: Field): string {
  return `${f.path} ${compactValue(f.from)} → ${compactValue(f.to)}`;
}

/** "40 s ago", "3 min ago", "2 h ago", "4 d ago" (never negative: the apiserver's clock may run ahead) */
export function agoText(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** who: "by kubectl-scale" for a person's tool, "in conflict with cloud-lb-controller" for another controller */
export function driftWho(d: Pick<NodeDriftDto, 'kind' | 'managers'>): string {
  const names = d.managers.join(', ') || 'an unknown manager';
  return d.kind === 'conflict' ? `in conflict with ${names}` : `by ${names}`;
}

/** The fields of an episode, the first two with their values: "spec.replicas 1 → 3, +2 more fields". */
export function fieldsText(fields: Field[], withValues = true, max = 2): string {
  const shown = fields.slice(0, max).map((f) => (withValues ? fieldChange(f) : f.path));
  const more = fields.length - shown.length;
  return more > 0 ? `${shown.join(', ')}, +${more} more field${more === 1 ? '' : 's'}` : shown.join(', ');
}

/** The app header's line: "drifted 40 s ago by kubectl-scale: spec.replicas 1 → 3" (newest object's episode). */
export function driftHeadline(d: AppDrift, now: number): string {
  const o = d.objects[0];
  const when = agoText(d.since, now);
  const head = d.kind === 'conflict' ? `drifted ${when}, ${driftWho(d)}` : `drifted ${when} ${driftWho(d)}`;
  if (!o) return head;
  const more = d.objectCount > 1 ? ` (and ${d.objectCount - 1} more object${d.objectCount === 2 ? '' : 's'})` : '';
  return `${head}: ${fieldsText(o.fields)}${more}`;
}

/** What the card says under its badges: "kubectl-scale: spec.replicas 1 → 3" */
export function driftCardText(d: AppDrift): string {
  const o = d.objects[0];
  return `${d.managers.join(', ')}${o ? `: ${fieldsText(o.fields, true, 1)}` : ''}`;
}

/** The tree row's mark: "drifted by kubectl-scale: spec.replicas 1 → 3" */
export function nodeDriftText(d: NodeDriftDto): string {
  return `drifted ${driftWho(d)}: ${fieldsText(d.fields, true, 1)}`;
}

/** A row's last write: "kube-controller-manager (status) · 12 s ago"; the object's age when nobody wrote it */
export function lastWriteText(n: Pick<TreeNodeDto, 'lastManager' | 'createdAt'>, now: number): string {
  const lm = n.lastManager;
  if (!lm) return n.createdAt ? `created ${agoText(n.createdAt, now)}` : '';
  const who = `${lm.manager}${lm.subresource ? ` (${lm.subresource})` : ''}`;
  return lm.time ? `${who} · ${agoText(lm.time, now)}` : who;
}
