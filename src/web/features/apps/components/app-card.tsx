import { Link } from 'react-router';
import { appPath, type AppSummary } from '../../../../api/schemas.ts';
import { shortRevision } from '../../../../domain/app.ts';
import { windowActorName } from '../../../../domain/window-actor.ts';
import { DriftBadge, HealthBadge, SyncBadge, Tag } from '../../../components/badges.tsx';
import { FrozenBadge } from '../../../components/frozen-badge.tsx';
import { driftCardText } from '../../../lib/drift-text.ts';
import { PruneHoldBadge } from '../../../components/prune-hold-badge.tsx';
import { SyncWindowLine } from './sync-windows.tsx';
import type { CardWindow } from '../../../lib/freeze-windows-query.ts';
import { Time } from '../../../components/time.tsx';

export function AppCard({ app, stale, window }: { app: AppSummary; stale: boolean; window?: CardWindow | undefined }) {
  return (
    <Link
      to={`/apps/${appPath(app.id)}`}
      data-testid="app-card"
      data-app-id={app.id}
      className={`block rounded-lg border bg-white p-3 shadow-sm transition hover:border-teal-500 hover:shadow ${stale ? 'border-dashed border-amber-400' : 'border-slate-200'}`}
    >
      <div className="flex items-start justify-between gap-2">
        <div className="min-w-0">
          <div className="truncate font-medium" title={app.name}>
            {app.name}
          </div>
          <div className="truncate text-xs text-slate-500">
            {app.kind} · {app.namespace}
          </div>
        </div>
        <Tag tone={app.controller === 'flux' ? 'teal' : 'violet'}>{app.controller === 'flux' ? 'Flux' : 'Argo CD'}</Tag>
      </div>
      <div className="mt-2 flex flex-wrap items-center gap-1.5">
        <SyncBadge status={app.sync} />
        <HealthBadge status={app.health} title={app.healthMessage} />
        {app.drift && <DriftBadge drift={app.drift} />}
        <PruneHoldBadge app={app} />
        {app.freeze ? (
          <FrozenBadge freeze={app.freeze} />
        ) : (
          app.automation.suspended && <Tag tone="amber">suspended</Tag>
        )}
        {stale && <Tag tone="amber">stale</Tag>}
        {app.envConflict && (
          <span data-testid="env-conflict-badge">
            <Tag tone="amber" title={app.envConflict}>
              env conflict
            </Tag>
          </span>
        )}
      </div>
      {app.envConflict && (
        // the console's mapping decides the environment (and every permission); the label only claims one
        <p
          className="mt-1 line-clamp-2 text-xs text-amber-900 wrap-anywhere"
          data-testid="env-conflict"
          title={app.envConflict}
        >
          {app.envConflict}
        </p>
      )}
      <SyncWindowLine app={app} />
      <PlannedWindowLine app={app} window={window} />
      {app.waitingOn && (
        // Flux holds it for a dependency: "why isn't it reconciling?" answered on the card
        <p
          className="mt-1 line-clamp-2 text-xs text-amber-900 wrap-anywhere"
          data-testid="card-waiting-on"
          title={app.waitingOn}
        >
          {app.waitingOn}
        </p>
      )}
      {app.drift && (
        <div
          className="mt-1 truncate text-xs text-orange-900"
          data-testid="card-drift"
          title={driftCardText(app.drift)}
        >
          {driftCardText(app.drift)}
        </div>
      )}
      <div className="mt-2 flex items-center justify-between text-xs text-slate-600">
        <span
          className="font-mono"
          data-testid="revision"
          title={app.source.revisionObserved ?? 'no revision applied yet'}
        >
          {shortRevision(app.source.revisionObserved) || '—'}
        </span>
        <span>{app.inventoryCount} objects</span>
      </div>
      {app.health !== 'Healthy' && app.healthMessage && (
        // the reason is text on the card, not only the badge's tooltip: read without a mouse
        <p
          className="mt-1 line-clamp-2 text-xs text-slate-700 wrap-anywhere"
          data-testid="health-reason"
          title={app.healthMessage}
        >
          {app.healthMessage}
        </p>
      )}
      {(app.envSource === 'label' || app.envSource === 'namespace') && (
        <div
          className="mt-1 text-[11px] text-slate-500"
          data-testid="env-source"
          title="No environment mapping is configured (CONSOLE_ENVIRONMENTS): whoever writes the app object decides its environment"
        >
          env from {app.envSource === 'label' ? 'a label' : 'its namespace'}
        </div>
      )}
      {app.simulated && (
        <div className="mt-1 text-[11px] text-violet-700">status simulated (no Argo CD controller)</div>
      )}
    </Link>
  );
}

/**
 * A planned freeze window on the card (issue 43): "next window Tue 10:00 (release-stop)" before it starts; in force,
 * the frozen badge says it ("Frozen until … (window …)"), and this line only while the app is not frozen yet (the
 * scheduler's next look) or is frozen by something else.
 */
function PlannedWindowLine({ app, window: w }: { app: AppSummary; window: CardWindow | undefined }) {
  if (!w) return null;
  if (w.active && app.freeze?.by === windowActorName(w.name)) return null;
  return (
    <p
      className="mt-1 line-clamp-2 text-xs text-sky-900 wrap-anywhere"
      data-testid="card-window"
      data-state={w.active ? 'active' : 'next'}
    >
      {w.active ? (
        <>
          window {w.name} in force until <Time iso={w.until} />
        </>
      ) : (
        <>
          next window <Time iso={w.from} /> ({w.name})
        </>
      )}
    </p>
  );
}
