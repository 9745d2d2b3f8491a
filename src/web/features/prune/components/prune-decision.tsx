import { useId, useState } from 'react';
import type { PrunePreviewResponse } from '../../../../api/schemas.ts';
import { useDecidePrunePreview } from '../api/decide-prune-preview.ts';

/**
 * Approve or reject with a comment. Disabled, with the reason, for whoever may not decide (the requester,
 * someone without the reviewer role, a preview no longer pending); needs-override asks for the typed
 * confirmation.
 */
export function PruneDecision({ data }: { data: PrunePreviewResponse }) {
  const { preview, viewer } = data;
  const m = useDecidePrunePreview(preview.id);
  const [comment, setComment] = useState('');
  const [typed, setTyped] = useState('');
  const ids = { comment: useId(), confirm: useId(), reason: useId(), needs: useId() };
  const override = preview.plan === 'needs-override';
  const confirmed = !override || typed === preview.confirmation;
  const can = viewer.canApprove && !m.isPending;
  const approvals = preview.decisions.filter((d) => d.decision === 'approve').length;
  return (
    <form
      className="mt-4 rounded border border-slate-200 bg-slate-50 p-3"
      aria-label="Decision"
      onSubmit={(e) => {
        e.preventDefault();
        if (can && confirmed && comment.trim())
          m.mutate({ decision: 'approve', comment, ...(override ? { confirmation: typed } : {}) });
      }}
    >
      <p className="text-sm text-slate-700">
        {approvals} of {preview.requiredApprovals} approval{preview.requiredApprovals === 1 ? '' : 's'}
        {override ? ' (high risk: two different reviewers and a typed confirmation)' : ''}
      </p>
      <label htmlFor={ids.comment} className="mt-2 block text-sm font-medium">
        Comment{' '}
        <span className="font-normal text-slate-600">(required: it goes into the evidence with your decision)</span>
      </label>
      <textarea
        id={ids.comment}
        value={comment}
        onChange={(e) => setComment(e.target.value)}
        disabled={!viewer.canApprove}
        required
        aria-required="true"
        aria-describedby={
          [viewer.reason ? ids.reason : '', viewer.canApprove && !comment.trim() ? ids.needs : '']
            .filter(Boolean)
            .join(' ') || undefined
        }
        className="mt-1 w-full rounded border border-slate-300 p-1 text-sm"
        rows={2}
        data-testid="prune-comment"
      />
      {override && preview.confirmation && (
        <>
          <label htmlFor={ids.confirm} className="mt-2 block text-sm font-medium">
            Type <code className="rounded bg-white px-1 wrap-anywhere">{preview.confirmation}</code> to confirm
          </label>
          <input
            id={ids.confirm}
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            disabled={!viewer.canApprove}
            autoComplete="off"
            className="mt-1 w-full rounded border border-slate-300 p-1 font-mono text-sm"
            data-testid="prune-confirmation"
          />
        </>
      )}
      {viewer.reason && (
        <p id={ids.reason} className="mt-2 text-sm text-slate-600 wrap-anywhere" data-testid="prune-approve-reason">
          {viewer.reason}
        </p>
      )}
      {viewer.canApprove && !comment.trim() && (
        <p id={ids.needs} className="mt-1 text-sm text-slate-600" data-testid="prune-comment-needed">
          Approve and Reject are enabled once you write a comment.
        </p>
      )}
      <div className="mt-2 flex gap-2">
        <button
          type="submit"
          disabled={!can || !confirmed || !comment.trim()}
          title={viewer.reason ?? undefined}
          className="rounded bg-red-700 px-3 py-1 text-sm font-medium text-white disabled:cursor-not-allowed disabled:bg-slate-300"
          data-testid="prune-approve"
        >
          Approve prune
        </button>
        <button
          type="button"
          disabled={!can || !comment.trim()}
          onClick={() => m.mutate({ decision: 'reject', comment })}
          className="rounded border border-slate-400 px-3 py-1 text-sm disabled:cursor-not-allowed disabled:text-slate-400"
          data-testid="prune-reject"
        >
          Reject
        </button>
      </div>
    </form>
  );
}
