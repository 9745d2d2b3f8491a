// A prune preview: the risk summary, each object, the decision, and the batches' progress.
import { Link, useParams } from 'react-router';
import { appPath, type PrunePreviewResponse } from '../../../../api/schemas.ts';
import { appSetOfId, appSetPath } from '../../../../api/appsets.ts';
import { Time } from '../../../components/time.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import { usePrunePreview } from '../api/prune-queries.ts';
import { batchProgress, riskSummary } from '../lib/prune-risk.ts';
import { PruneCandidates } from './prune-candidates.tsx';
import { PruneDecision } from './prune-decision.tsx';

const STATUS_TONE: Record<string, string> = {
  pending: 'bg-amber-100 text-amber-900',
  approved: 'bg-teal-100 text-teal-900',
  executing: 'bg-teal-100 text-teal-900',
  done: 'bg-emerald-100 text-emerald-900',
  rejected: 'bg-slate-200 text-slate-800',
  void: 'bg-slate-200 text-slate-800',
  failed: 'bg-red-100 text-red-900',
};

const HANDOVER_TONE: Record<string, string> = {
  waiting: 'border-amber-200 bg-amber-50 text-amber-900',
  deleted: 'border-emerald-200 bg-emerald-50 text-emerald-900',
  lapsed: 'border-red-200 bg-red-50 text-red-900',
  unknown: 'border-slate-300 bg-slate-50 text-slate-800',
};

/** A done prune its controller carries out: whether the controller has deleted the stamped objects yet. */
function Handover({ handover: h }: { handover: NonNullable<PrunePreviewResponse['handover']> }) {
  return (
    <div
      className={`mt-2 rounded border p-2 text-sm ${HANDOVER_TONE[h.state] ?? ''}`}
      data-testid="prune-handover"
      data-state={h.state}
      role="status"
    >
      <p className="wrap-anywhere">{h.text}</p>
      {h.live.length > 0 && (
        <ul className="mt-1 list-disc pl-5 font-mono text-xs">
          {h.live.map((o) => (
            <li key={o} className="break-all">
              {o}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function PrunePreviewPage() {
  const { id = '' } = useParams();
  const q = usePrunePreview(id);
  useDocumentTitle('Prune preview');
  if (q.isPending) return <p className="text-slate-500">Loading…</p>;
  if (q.isError)
    return (
      <p role="alert" className="rounded border border-red-200 bg-red-50 p-4 text-red-800">
        {q.error instanceof ApiError && q.error.status === 404 ? 'No such prune preview.' : q.error.message}
      </p>
    );
  const { preview } = q.data;
  const progress = batchProgress(preview);
  const nothing = preview.plan === 'nothing' || preview.plan === 'unknown';
  const appSetOf = appSetOfId(preview.appId);
  return (
    <div className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="text-xl font-semibold">Prune preview</h1>
        <span className={`rounded px-2 py-0.5 text-xs ${STATUS_TONE[preview.status] ?? ''}`} data-testid="prune-status">
          {preview.status}
        </span>
        {appSetOf ? (
          // the shrink of an ApplicationSet: its page
          <Link
            to={`/appsets/${appSetPath(appSetOf)}`}
            className="min-w-0 text-sm text-teal-700 underline wrap-anywhere"
          >
            ApplicationSet {appSetOf.namespace}/{appSetOf.name} ({appSetOf.cluster})
          </Link>
        ) : (
          <Link
            to={`/apps/${appPath(preview.appId)}`}
            className="min-w-0 text-sm text-teal-700 underline wrap-anywhere"
          >
            {preview.appId}
          </Link>
        )}
        <Link to="/prune-previews" className="ml-auto text-sm text-teal-700 underline">
          Reviewer queue
        </Link>
      </div>
      <p
        className={`mt-3 text-lg ${nothing ? 'text-emerald-800' : 'text-amber-900'}`}
        data-testid="prune-risk"
        role="status"
      >
        {riskSummary(preview)}
      </p>
      {preview.reasons.length > 0 && (
        <ul className="mt-2 list-disc pl-5 text-sm text-red-800" data-testid="prune-reasons">
          {preview.reasons.map((r) => (
            <li key={r} className="wrap-anywhere">
              {r}
            </li>
          ))}
        </ul>
      )}
      {preview.statusReason && <p className="mt-1 text-sm text-slate-600 wrap-anywhere">{preview.statusReason}</p>}
      {q.data.handover && <Handover handover={q.data.handover} />}
      <dl className="mt-3 grid grid-cols-1 gap-x-4 gap-y-1 text-sm sm:grid-cols-[10rem_minmax(0,1fr)]">
        <dt className="text-slate-500">Revision</dt>
        <dd className="font-mono break-all">{preview.revision ?? '—'}</dd>
        <dt className="text-slate-500">Requested by</dt>
        <dd className="wrap-anywhere">
          {preview.requestedBy.name} <span className="text-slate-500">({preview.requestedBy.issuer})</span>
        </dd>
        <dt className="text-slate-500">Expires</dt>
        <dd>
          <Time iso={preview.expiresAt} />
        </dd>
        <dt className="text-slate-500">Deletes</dt>
        <dd>
          in batches of {preview.batchSize}, propagation {preview.propagationPolicy}, with uid and resourceVersion
          preconditions
        </dd>
        <dt className="text-slate-500">Snapshot</dt>
        <dd className="font-mono text-xs break-all">{preview.snapshotHash}</dd>
      </dl>
      {progress.total > 0 && (
        <div className="mt-3">
          <label className="text-sm text-slate-600" htmlFor="prune-progress">
            Batches: {progress.done} of {progress.total}
            {progress.failed ? ' — stopped at a failure' : ''}
          </label>
          <progress id="prune-progress" className="block w-full" max={progress.total} value={progress.done} />
        </div>
      )}
      {preview.decisions.length > 0 && (
        <ul className="mt-3 text-sm" data-testid="prune-decisions">
          {preview.decisions.map((d) => (
            <li key={`${d.issuer}/${d.subject}`} className="wrap-anywhere">
              <strong>{d.decision === 'approve' ? 'Approved' : 'Rejected'}</strong> by {d.name} ({d.issuer}):{' '}
              {d.comment}
            </li>
          ))}
        </ul>
      )}
      <PruneCandidates preview={preview} />
      {preview.status === 'pending' && <PruneDecision data={q.data} />}
    </div>
  );
}
