// Argo CD sync windows (issue 43): on the card, one line when automated syncs are held now; on the app page, every
// window of its AppProject that applies to it, which are active, what holds automated syncs and until when, and
// when the answer next changes — evaluated by the BFF as Argo CD does (server/apps/sync-windows.ts).
import type { AppSummary, AppSyncWindows } from '../../../../api/apps.ts';
import { Tag } from '../../../components/badges.tsx';
import { Time } from '../../../components/time.tsx';

type Spec = AppSyncWindows['windows'][number];

export function windowLabel(w: Spec): string {
  return `${w.kind} ${w.description ? `“${w.description}”` : `${w.schedule} for ${w.duration}`}`;
}

function scheduleText(w: Spec): string {
  return `${w.schedule} for ${w.duration}${w.timeZone ? ` (${w.timeZone})` : ' (UTC)'}${w.manualSync ? ', manual syncs allowed' : ''}`;
}

/** The card's line: only when the windows hold automated syncs now (or cannot be read). */
export function SyncWindowLine({ app }: { app: AppSummary }) {
  const w = app.syncWindow;
  if (!w) return null;
  return (
    <p
      className="mt-1 line-clamp-2 text-xs text-amber-900 wrap-anywhere"
      data-testid="card-sync-window"
      title={w.reason}
    >
      {w.automated === 'unknown' ? 'sync windows unknown: ' : 'auto-sync held: '}
      {w.reason}
      {w.until && (
        <>
          {' '}
          until <Time iso={w.until} />
        </>
      )}
    </p>
  );
}

const VERDICT_TONE = { allowed: 'teal', blocked: 'amber', unknown: 'slate' } as const;

/** The app page's panel: absent for a Flux app, and for an Argo CD app whose project has no window for it. */
export function SyncWindowsPanel({ windows }: { windows: AppSyncWindows | undefined }) {
  if (!windows || (windows.status === 'ok' && windows.windows.length === 0)) return null;
  const active = new Set(windows.active.map((a) => JSON.stringify(a.window)));
  const untilOf = new Map(windows.active.map((a) => [JSON.stringify(a.window), a.until]));
  return (
    <section className="mt-3 rounded border border-slate-200 p-3" data-testid="sync-windows" aria-label="Sync windows">
      <h3 className="text-sm font-semibold">Sync windows (AppProject {windows.project})</h3>
      {windows.status === 'unknown' && (
        <p className="mt-1 text-sm text-amber-900" data-testid="sync-windows-unknown">
          Unknown: {windows.why}
        </p>
      )}
      <p className="mt-1 flex flex-wrap items-center gap-2 text-sm">
        <span>Automated sync</span>
        <span data-testid="sync-windows-automated">
          <Tag tone={VERDICT_TONE[windows.automated]}>{windows.automated}</Tag>
        </span>
        <span>manual sync</span>
        <span data-testid="sync-windows-manual">
          <Tag tone={VERDICT_TONE[windows.manual]}>{windows.manual}</Tag>
        </span>
        {windows.blockedBy && (
          <span data-testid="sync-windows-blocked-by">
            {windows.blockedBy.window.kind === 'deny' ? 'in ' : 'outside '}
            {windowLabel(windows.blockedBy.window)}
            {windows.blockedBy.until && (
              <>
                {windows.blockedBy.window.kind === 'deny' ? ' until ' : ', which opens '}
                <Time iso={windows.blockedBy.until} />
              </>
            )}
          </span>
        )}
      </p>
      {windows.nextChange && (
        <p className="mt-1 text-xs text-slate-600" data-testid="sync-windows-next">
          Next change: <Time iso={windows.nextChange} />
        </p>
      )}
      <ul className="mt-2 space-y-1 text-sm">
        {windows.windows.map((w, i) => {
          const key = JSON.stringify(w);
          const on = active.has(key);
          const until = untilOf.get(key);
          return (
            <li key={i} className="flex flex-wrap items-center gap-2" data-testid="sync-window">
              <Tag tone={w.kind === 'deny' ? 'amber' : 'teal'}>{w.kind}</Tag>
              <span>{w.description ?? scheduleText(w)}</span>
              {w.description && <span className="text-xs text-slate-500">{scheduleText(w)}</span>}
              {on && (
                <span className="text-xs font-medium">
                  active
                  {until && (
                    <>
                      {' '}
                      until <Time iso={until} />
                    </>
                  )}
                </span>
              )}
            </li>
          );
        })}
      </ul>
      {[...windows.invalid, ...windows.warnings].map((x, i) => (
        <p key={i} className="mt-1 text-xs text-amber-900">
          {windowLabel(x.window)}: {x.reason}
        </p>
      ))}
    </section>
  );
}
