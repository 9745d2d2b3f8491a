// The reviewer queue: pending prune previews with when they were requested, requester and risk.
import { useState } from 'react';
import { Link } from 'react-router';
import { PRUNE_PREVIEW_STATUSES } from '../../../../api/schemas.ts';
import { TimeAgo } from '../../../components/time-ago.tsx';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import { usePrunePreviews, type PrunePreviewState } from '../api/prune-queries.ts';
import { riskSummary } from '../lib/prune-risk.ts';

export function PruneQueue() {
  const [state, setState] = useState<PrunePreviewState | 'all'>('pending');
  const q = usePrunePreviews(state);
  useDocumentTitle('Prune previews');
  return (
    <div className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="text-xl font-semibold">Prune previews</h1>
        <label className="ml-auto text-sm">
          State{' '}
          <select
            value={state}
            onChange={(e) => setState(e.target.value as PrunePreviewState | 'all')}
            className="rounded border border-slate-300 p-1"
          >
            {['all', ...PRUNE_PREVIEW_STATUSES].map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      {q.isPending && <p className="text-slate-500">Loading…</p>}
      {q.isError && <p role="alert">{q.error.message}</p>}
      {q.data && q.data.previews.length === 0 && <p className="mt-3 text-slate-600">No {state} prune previews.</p>}
      {q.data && q.data.previews.length > 0 && (
        // the table scrolls in its own box on a narrow screen, never the page
        <div className="relative mt-3 overflow-x-auto">
          <table className="w-full min-w-[36rem] text-left text-sm" data-testid="prune-queue">
            <thead className="text-xs text-slate-500">
              <tr>
                <th className="py-1 pr-3">App</th>
                <th className="py-1 pr-3">Risk</th>
                <th className="py-1 pr-3">Requested by</th>
                <th className="py-1 pr-3">Requested</th>
                <th className="py-1">Approvals</th>
              </tr>
            </thead>
            <tbody>
              {q.data.previews.map((p) => (
                <tr key={p.id} className="border-t border-slate-100">
                  <td className="py-1 pr-3 wrap-anywhere">
                    <Link to={`/prune-previews/${p.id}`} className="text-teal-700 underline">
                      {p.appId}
                    </Link>
                  </td>
                  <td className="py-1 pr-3">
                    {riskSummary(p)}
                    {p.plan === 'needs-override' ? ' — needs override' : ''}
                  </td>
                  <td className="py-1 pr-3 wrap-anywhere">{p.requestedBy.name}</td>
                  <td className="py-1 pr-3 whitespace-nowrap">
                    <TimeAgo iso={p.createdAt} />
                  </td>
                  <td className="py-1">
                    {p.approvals} / {p.requiredApprovals}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
