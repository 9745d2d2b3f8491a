// One line of what an evidence record says, for the app's evidence panel (pure, unit-tested).
import { z } from 'zod';
import { shortRevision } from '../../../../domain/app.ts';
import { formatLocalTime } from '../../../components/time.tsx';
import { fieldsText } from '../../../lib/drift-text.ts';

const Field = z.object({ path: z.string(), from: z.unknown().optional(), to: z.unknown().optional() });
const DriftData = z.object({
  kind: z.enum(['person', 'conflict']).optional(),
  managers: z.array(z.string()).default([]),
  fields: z.array(Field).default([]),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  durationMs: z.number().optional(),
  writes: z.number().optional(),
  object: z.string().optional(),
});

/** "1 min 5 s", "15 s", "2 h 3 min" */
export function durationText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  return `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
}

/** The object of a record ("nonprod/apps/Deployment/dev/tts-gateway") as "Deployment dev/tts-gateway". */
const objectText = (id: string | undefined) => {
  const [, , kind, ns, name] = (id ?? '').split('/');
  return kind && name ? `${kind} ${ns && ns !== '_' ? `${ns}/` : ''}${name}` : '';
};

/** `timeZone`: the user's unless given (tests) */
export function evidenceText(e: { type: string; data: Record<string, unknown> }, timeZone?: string): string {
  const clock = (iso: string) => formatLocalTime(iso, timeZone);
  if (e.type === 'drift.detected' || e.type === 'drift.reverted' || e.type === 'drift.adopted') {
    const d = DriftData.safeParse(e.data);
    if (!d.success) return '';
    const v = d.data;
    const who = `${v.kind === 'conflict' ? 'conflict with ' : ''}${v.managers.join(', ')}`;
    const what = `${objectText(v.object)} ${fieldsText(v.fields, e.type === 'drift.detected')}`.trim();
    if (e.type === 'drift.detected') return `${who}: ${what}`;
    const span =
      v.startedAt && v.endedAt
        ? `${clock(v.startedAt)} → ${clock(v.endedAt)}${v.durationMs !== undefined ? ` (${durationText(v.durationMs)})` : ''}`
        : '';
    const writes = v.writes && v.writes > 1 ? `, ${v.writes} writes` : '';
    return `${who}: ${what} · ${span}${writes}`;
  }
  const d = e.data;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  switch (e.type) {
    case 'access.denied': {
      // what was denied, on what, why — "denied: approve this prune (POST /api/prune-previews/:id/approve): You need …"
      const action = ACTION_TEXT[str(d.action)] ?? str(d.action);
      const route = d.method && d.route ? ` (${str(d.method)} ${str(d.route)})` : '';
      const repeated =
        typeof d.repeatedSinceLastRecord === 'number' ? `; ${d.repeatedSinceLastRecord} more times since` : '';
      return `denied: ${action}${route}${d.reason ? `: ${str(d.reason)}` : ''}${repeated}`;
    }
    case 'freeze.started':
      return `froze ${Array.isArray(d.apps) ? `${d.apps.length} app${d.apps.length === 1 ? '' : 's'}` : ''} until ${d.until ? clock(str(d.until)) : '?'}: ${str(d.reason)}`;
    case 'window.created':
      return `planned freeze window ${str(d.window)}: ${str(d.reason)}`;
    case 'window.deleted':
      return `deleted freeze window ${str(d.window)}: ${str(d.reason)}`;
    case 'window.started':
      return `freeze window ${str(d.window)} started, until ${d.until ? clock(str(d.until)) : '?'}: ${str(d.reason)}`;
    case 'window.starting-soon':
      return `freeze window ${str(d.window)} starts at ${d.from ? clock(str(d.from)) : '?'}: the teams notified`;
    case 'breakglass.requested':
      return `asked to deploy through window ${str(d.window)} for ${String(d.minutes ?? '?')} min: ${str(d.reason)}`;
    case 'breakglass.approved':
      return `approved ${str(d.requestedBy)}'s break-glass through window ${str(d.window)} until ${d.until ? clock(str(d.until)) : '?'}: ${str(d.reason)}`;
    case 'breakglass.ended':
      return `break-glass through window ${str(d.window)} ${d.state === 'lapsed' ? 'lapsed' : 'ended'}: ${str(d.note)}`;
    case 'freeze.extended':
      return `extended to ${d.until ? clock(str(d.until)) : '?'}: ${str(d.reason)}`;
    case 'freeze.ended': {
      const ds = Array.isArray(d.decisions) ? (d.decisions as Array<{ action?: string }>) : [];
      const wb = ds.filter((x) => x.action === 'write-back').length;
      return `unfrozen: ${wb} change${wb === 1 ? '' : 's'} written back, ${ds.length - wb} left to Git`;
    }
    case 'freeze.expired':
      return d.expiredWhileConsoleWasDown ? 'expired while the console was down: Git wins' : 'expired: Git wins';
    case 'freeze.write-back':
      return `write-back to ${str(d.branch)} (${Array.isArray(d.changes) ? d.changes.length : 0} change(s))`;
    case 'freeze.restored':
      return `automation restored${d.resumedAfterRestart ? ' (after a restart)' : ''}`;
    case 'freeze.interfered':
      return str(d.message);
    case 'release.manifests-expired':
      return `${Array.isArray(d.renderHashes) ? d.renderHashes.length : 0} manifest(s) unused for ${String(d.retentionDays)} days expire (their hashes stay)`;
    case 'freeze.ending-soon':
      return `ends at ${d.expiresAt ? clock(str(d.expiresAt)) : '?'}: on-call notified`;
    case 'action.refused': {
      // "refused: prune.approved: you already decided on this preview; 3 more times since"
      const repeated =
        typeof d.repeatedSinceLastRecord === 'number' ? `; ${d.repeatedSinceLastRecord} more times since` : '';
      return `refused: ${str(d.action)}${d.reason ? `: ${str(d.reason)}` : ''}${repeated}`;
    }
    case 'app.env-conflict':
      return `env conflict: ${str(d.conflict) || "the app's env label disagrees with the console's mapping"}`;
    case 'prune.settled':
      return `${str(d.object)}: ${d.state === 'deleted' ? 'found deleted' : 'found not deleted'} after its delete went unanswered`;
    case 'prune.resumed':
      return `resumed after a restart${d.reason ? `: ${str(d.reason)}` : ''}`;
    case 'action.interrupted':
      return `${str(d.action)} #${String(d.intentSeq ?? '?')}: interrupted — the console stopped before its outcome; whether it took effect is unknown`;
    case 'action.resolved':
      return `${str(d.action)} #${String(d.intentSeq ?? '?')}: after its interruption it ${d.outcome === 'action.completed' ? 'completed' : 'failed'}${d.error ? `: ${str(d.error)}` : ''}`;
    case 'action.completed':
    case 'action.failed':
      return `${str(d.action)} #${String(d.intentSeq ?? '?')}${d.error ? `: ${str(d.error)}` : ''}${d.commit ? ` commit ${str(d.commit).slice(0, 7)}` : ''}`;
  }
  return typeof d.revision === 'string' ? shortRevision(d.revision) : '';
}

/** What an action lets someone do (access.denied records name the action). */
const ACTION_TEXT: Record<string, string> = {
  'app.read': 'see this app',
  'app.reconcile': 'reconcile',
  'prune.request': 'request a prune preview',
  'prune.approve': 'approve a prune',
  'freeze.toggle': 'freeze or unfreeze',
  'release.read': 'read releases',
  'evidence.read': 'read evidence',
  'evidence.verify': 'verify the evidence chain',
  'users.manage': 'manage users',
  'sinks.manage': 'manage event sinks',
};
