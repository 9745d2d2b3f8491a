// One freeze: who, why, the incident, when it started and expires (counting down), its targets (with what
// was done to them out of band), its extensions, the live changes since it began with the unfreeze, and,
// once ended, the decisions and what was written back.
import { Link, useParams } from 'react-router';
import { appPath, type FreezeDto } from '../../../../api/schemas.ts';
import { SafeLink } from '../../../components/safe-link.tsx';
import { Time } from '../../../components/time.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import { useNow } from '../../../lib/use-now.ts';
import { usePermission } from '../../../lib/use-permission.ts';
import { useFreeze } from '../api/freeze-queries.ts';
import { timeLeft } from '../lib/freeze-text.ts';
import { ExtendForm } from './extend-form.tsx';
import { FreezeChanges } from './freeze-changes.tsx';
import { WriteBackResult } from './write-back-result.tsx';

export const FREEZE_STATUS: Record<FreezeDto['status'], { text: string; icon: string; tone: string }> = {
  active: { text: 'Active', icon: '❄', tone: 'bg-sky-100 text-sky-900 ring-sky-400' },
  ending: { text: 'Ending', icon: '…', tone: 'bg-amber-100 text-amber-900 ring-amber-300' },
  ended: { text: 'Ended', icon: '✓', tone: 'bg-slate-100 text-slate-800 ring-slate-300' },
  failed: { text: 'Failed', icon: '✖', tone: 'bg-red-100 text-red-900 ring-red-300' },
};

export function FreezeStatus({ status }: { status: FreezeDto['status'] }) {
  const s = FREEZE_STATUS[status];
  return (
    <span
      className={`inline-flex items-center gap-1 rounded px-1.5 py-0.5 text-xs font-medium ring-1 ring-inset ${s.tone}`}
      data-testid="freeze-status"
      data-status={status}
    >
      <span aria-hidden>{s.icon}</span>
      {s.text}
    </span>
  );
}

/** What a freeze covers: one app, or every app of an environment (or cluster). */
export const scopeText = (f: Pick<FreezeDto, 'cluster' | 'env' | 'app'>): string =>
  f.app ? (f.app.split('/').at(-1) ?? f.app) : `every app of ${f.cluster}${f.env ? `/${f.env}` : ''}`;

export function FreezePage() {
  const { id = '' } = useParams();
  const q = useFreeze(id);
  const now = useNow(1_000);
  useDocumentTitle('Freeze');
  const f = q.data?.freeze;
  // the reason an action is refused (the BFF decides; this explains): the first target this user may not touch
  const firstEnv = f?.targets[0]?.env ?? f?.env ?? '*';
  const perm = usePermission('freeze.toggle', { cluster: f?.cluster ?? '', env: firstEnv });
  if (q.isPending) return <p className="text-slate-500">Loading…</p>;
  if (q.isError || !f)
    return (
      <p role="alert" className="rounded border border-red-200 bg-red-50 p-4 text-red-800">
        {q.error instanceof ApiError && q.error.status === 404 ? 'No such freeze.' : q.error?.message}
      </p>
    );
  const disabledReason = f.canEnd
    ? undefined
    : (perm.reason ?? (f.active ? 'You may not extend or end this freeze' : undefined));
  const left = timeLeft(f.expiresAt, now);
  return (
    <div className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm" data-testid="freeze-page">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="text-xl font-semibold">
          Freeze of {scopeText(f)} <span className="font-mono text-sm text-slate-500">{f.id}</span>
        </h1>
        <FreezeStatus status={f.status} />
        <Link to="/freezes" className="ml-auto text-sm text-teal-700 underline">
          All freezes
        </Link>
      </div>
      {f.status === 'ending' && f.endReason ? (
        // a stalled end (its write-back could not be completed after a takeover): on-call must act
        <p
          role="alert"
          data-testid="freeze-end-stalled"
          className="mt-2 rounded border border-amber-300 bg-amber-50 p-2 text-sm break-words text-amber-900"
        >
          {f.endReason}
        </p>
      ) : null}
      <dl className="mt-3 grid grid-cols-1 gap-x-4 gap-y-1 text-sm sm:grid-cols-[9rem_minmax(0,1fr)]">
        <dt className="text-slate-500">Frozen by</dt>
        <dd data-testid="freeze-by" className="wrap-anywhere">
          {f.createdBy}
        </dd>
        <dt className="text-slate-500">Why</dt>
        <dd data-testid="freeze-reason-text" className="wrap-anywhere">
          {f.reason}
        </dd>
        <dt className="text-slate-500">Incident</dt>
        <dd>{f.incident ? <SafeLink href={f.incident}>{f.incident}</SafeLink> : '—'}</dd>
        <dt className="text-slate-500">Scope</dt>
        <dd>
          {f.cluster}
          {f.env ? `/${f.env}` : ''}
          {f.app ? (
            <>
              {' · '}
              <Link to={`/apps/${appPath(f.app)}`} className="text-teal-700 underline">
                {f.app}
              </Link>
            </>
          ) : null}
        </dd>
        <dt className="text-slate-500">Started</dt>
        <dd>
          <Time iso={f.startedAt} />
        </dd>
        <dt className="text-slate-500">{f.active ? 'Expires' : 'Was to expire'}</dt>
        <dd>
          <Time iso={f.expiresAt} />
          {f.active && (
            <span className="ml-2 font-medium" data-testid="freeze-time-left" aria-live="off">
              ({left === 'expired' ? 'expired, ending' : `${left} left`})
            </span>
          )}
        </dd>
        {f.endedAt && (
          <>
            <dt className="text-slate-500">Ended</dt>
            <dd>
              <Time iso={f.endedAt} />
              {f.endedBy ? ` by ${f.endedBy}` : ''}
            </dd>
          </>
        )}
      </dl>
      <section className="mt-4" aria-labelledby="freeze-targets-h">
        <h2 id="freeze-targets-h" className="font-semibold">
          Frozen apps ({f.targets.length})
        </h2>
        <ul className="mt-1 space-y-1 text-sm" data-testid="freeze-targets">
          {f.targets.map((t) => (
            <li key={t.appId} className="wrap-anywhere">
              <Link to={`/apps/${appPath(t.appId)}`} className="text-teal-700 underline">
                {t.name}
              </Link>{' '}
              <span className="text-slate-500">
                ({t.controller === 'flux' ? `Flux ${t.kind}` : 'Argo CD Application'}, {t.env})
              </span>
              {!t.applied && <span className="ml-1 text-amber-800">not paused</span>}
              {t.applied && t.controllerPause && f.active && <PauseLine pause={t.controllerPause} />}
              {t.interference && (
                <p
                  role="alert"
                  className="mt-1 rounded border border-amber-300 bg-amber-50 p-2 text-amber-950"
                  data-testid="freeze-interference"
                >
                  <span aria-hidden>⚠ </span>
                  {t.interference.message} (<Time iso={t.interference.at} />)
                </p>
              )}
            </li>
          ))}
        </ul>
      </section>
      {f.extensions.length > 0 && (
        <section className="mt-4" aria-labelledby="freeze-ext-h">
          <h2 id="freeze-ext-h" className="font-semibold">
            Extensions
          </h2>
          <ol className="mt-1 text-sm" data-testid="freeze-extensions">
            {f.extensions.map((x) => (
              <li key={x.at} className="wrap-anywhere">
                <Time iso={x.at} /> by {x.by}: <Time iso={x.from} /> → <Time iso={x.to} /> — {x.reason}
              </li>
            ))}
          </ol>
        </section>
      )}
      {f.active && <FreezeChanges freeze={f} disabledReason={disabledReason} />}
      {f.active && <ExtendForm id={f.id} disabledReason={disabledReason} />}
      {!f.active && <WriteBackResult freeze={f} />}
    </div>
  );
}

/**
 * Whether Flux's controller has handled the suspended object: until then a reconcile it began before the freeze
 * may still apply and revert a live edit (server freeze/out-of-band.ts confirmPause).
 */
function PauseLine({ pause }: { pause: { requested: string; confirmed?: string | undefined } }) {
  if (pause.confirmed)
    return (
      <p className="mt-0.5 text-slate-600" data-testid="freeze-pause-confirmed">
        ✓ paused: the controller handled the suspend (<Time iso={pause.confirmed} />
        ); live edits now stay
      </p>
    );
  return (
    <p role="status" className="mt-0.5 text-amber-900" data-testid="freeze-pause-pending">
      Waiting for the controller to confirm the pause: a reconcile or sync it began before the freeze may still apply
      and revert a live edit made now.
    </p>
  );
}
