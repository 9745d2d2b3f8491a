import type { HealthStatus, SyncStatus } from '../../domain/app.ts';

const HEALTH_STYLE: Record<HealthStatus, string> = {
  Healthy: 'bg-emerald-100 text-emerald-800 ring-emerald-300',
  Progressing: 'bg-sky-100 text-sky-800 ring-sky-300',
  Degraded: 'bg-red-100 text-red-800 ring-red-300',
  Suspended: 'bg-slate-200 text-slate-700 ring-slate-300',
  Missing: 'bg-amber-100 text-amber-800 ring-amber-300',
  Unknown: 'bg-zinc-100 text-zinc-700 ring-zinc-300',
};
const HEALTH_ICON: Record<HealthStatus, string> = {
  Healthy: '♥',
  Progressing: '◔',
  Degraded: '✖',
  Suspended: '⏸',
  Missing: '?',
  Unknown: '?',
};
const SYNC_STYLE: Record<SyncStatus, string> = {
  Synced: 'bg-emerald-50 text-emerald-800 ring-emerald-300',
  OutOfSync: 'bg-amber-100 text-amber-900 ring-amber-300',
  Unknown: 'bg-zinc-100 text-zinc-700 ring-zinc-300',
};

const base = 'inline-flex items-center gap-1 rounded px-1.5 py-0.5 text-xs font-medium ring-1 ring-inset';

// a status from a cluster the console cannot reach now: its last known value, greyed and dashed, never green
const STALE = 'bg-white text-slate-600 ring-slate-400 ring-dashed border border-dashed border-slate-400';

export function HealthBadge({ status, title, stale }: { status: HealthStatus; title?: string; stale?: boolean }) {
  return (
    <span
      className={`${base} ${stale ? STALE : HEALTH_STYLE[status]}`}
      title={title}
      data-testid="health"
      data-status={status}
      data-stale={stale ? 'true' : undefined}
    >
      <span aria-hidden>{HEALTH_ICON[status]}</span>
      {stale ? `last known ${status}` : status}
    </span>
  );
}

export function SyncBadge({ status, stale }: { status: SyncStatus; stale?: boolean }) {
  return (
    <span
      className={`${base} ${stale ? STALE : SYNC_STYLE[status]}`}
      data-testid="sync"
      data-status={status}
      data-stale={stale ? 'true' : undefined}
    >
      {status === 'Synced' ? '✓' : status === 'OutOfSync' ? '≠' : '?'} {stale ? `last known ${status}` : status}
    </span>
  );
}

/** "Drifted" (a person's tool changed what Git declares) or "Conflict" (another controller did), next to sync and health */
export function DriftBadge({ drift }: { drift: { kind: 'person' | 'conflict'; managers: string[] } }) {
  const person = drift.kind === 'person';
  return (
    <span
      className={`${base} ${person ? 'bg-orange-100 text-orange-900 ring-orange-300' : 'bg-fuchsia-100 text-fuchsia-900 ring-fuchsia-300'}`}
      title={`${person ? 'changed by' : 'in conflict with'} ${drift.managers.join(', ')}`}
      data-testid="drift"
      data-kind={drift.kind}
    >
      <span aria-hidden>⚠</span>
      {person ? 'Drifted' : 'Conflict'}
    </span>
  );
}

export function Tag({
  children,
  tone = 'slate',
  title,
}: {
  children: React.ReactNode;
  tone?: 'slate' | 'violet' | 'teal' | 'amber';
  title?: string;
}) {
  const tones = {
    slate: 'bg-slate-100 text-slate-700 ring-slate-300',
    violet: 'bg-violet-100 text-violet-800 ring-violet-300',
    teal: 'bg-teal-100 text-teal-800 ring-teal-300',
    amber: 'bg-amber-100 text-amber-900 ring-amber-300',
  };
  return (
    <span className={`${base} ${tones[tone]}`} title={title}>
      {children}
    </span>
  );
}
