// "Roll back to this release" on an earlier release row (issue 16): a pull request through the forge that puts
// the environment's directory back to that commit — never a direct push. Asks why (the reviewer reads it in the
// pull request), then shows the pull request and what it changes. Disabled, with the reason, without the role.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { appPath, RollbackBody, RollbackResponse } from '../../../../api/schemas.ts';
import { ModalDialog } from '../../../components/modal-dialog.tsx';
import { SafeLink } from '../../../components/safe-link.tsx';
import { apiSend } from '../../../lib/api-client.ts';
import { usePermission } from '../../../lib/use-permission.ts';
import { releaseKeys } from '../api/release-queries.ts';

export function RollbackButton({
  appId,
  appName,
  cluster,
  env,
  sha,
}: {
  appId: string;
  appName: string;
  cluster: string;
  env: string;
  sha: string;
}) {
  const perm = usePermission('release.rollback', { cluster, env });
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const qc = useQueryClient();
  const ids = { reason: useId(), why: useId() };
  const m = useMutation({
    mutationFn: (body: { reason: string }) =>
      apiSend(
        'POST',
        `/api/apps/${appPath(appId)}/releases/${sha}/rollback`,
        RollbackResponse,
        RollbackBody.parse(body),
      ),
    meta: { errors: 'inline' },
    onSuccess: () => void qc.invalidateQueries({ queryKey: releaseKeys.forApp(appId) }),
  });
  const short = sha.slice(0, 7);
  return (
    <>
      <button
        type="button"
        disabled={!perm.allowed}
        title={perm.allowed ? `Open a pull request that puts ${env} back to ${short}` : perm.reason}
        aria-haspopup="dialog"
        onClick={() => setOpen(true)}
        data-testid="rollback"
        className="rounded border border-amber-700 px-2 py-0.5 text-xs font-medium text-amber-900 disabled:cursor-not-allowed disabled:border-slate-300 disabled:text-slate-500"
      >
        Roll back to {short}
      </button>
      {open && (
        <ModalDialog
          title={`Roll back ${appName} to ${short}`}
          description={`Opens a pull request that puts ${appName}'s directory on its branch back to ${short}; it goes live only after review and merge. Files outside the directory (shared with other environments) are named, not reverted.`}
          onClose={() => {
            setOpen(false);
            m.reset();
          }}
          testId="rollback-dialog"
        >
          {m.data ? (
            <div className="text-sm" role="status" data-testid="rollback-result">
              {m.data.existing ? (
                <p>
                  A rollback to {short} is already open: pull request{' '}
                  <SafeLink href={m.data.pullRequest.url}>#{m.data.pullRequest.number}</SafeLink> on{' '}
                  <code>{m.data.plan.branch}</code>
                  {m.data.intentSeq ? ` (evidence #${m.data.intentSeq})` : ''}. No second one was opened.
                </p>
              ) : (
                <p>
                  Pull request <SafeLink href={m.data.pullRequest.url}>#{m.data.pullRequest.number}</SafeLink> opened on{' '}
                  <code>{m.data.plan.branch}</code> (evidence #{m.data.intentSeq}).
                </p>
              )}
              <ul className="mt-2 list-disc pl-5">
                {m.data.plan.files.map((f) => (
                  <li key={f.path}>
                    {f.change} <code>{f.path}</code>
                  </li>
                ))}
              </ul>
              {m.data.plan.outside.length > 0 && (
                <p className="mt-2 text-amber-900">
                  Not reverted (outside <code>{m.data.plan.path}</code>): {m.data.plan.outside.join(', ')}
                </p>
              )}
            </div>
          ) : (
            <form
              className="text-sm"
              onSubmit={(e) => {
                e.preventDefault();
                if (!m.isPending && reason.trim()) m.mutate({ reason: reason.trim() });
              }}
            >
              <label htmlFor={ids.reason} className="block font-medium">
                Why <span className="font-normal text-slate-600">(required; the reviewer reads it)</span>
              </label>
              <textarea
                id={ids.reason}
                value={reason}
                onChange={(e) => setReason(e.target.value)}
                required
                maxLength={500}
                rows={3}
                aria-describedby={m.error ? ids.why : undefined}
                className="mt-1 w-full rounded border border-slate-300 p-1"
                data-testid="rollback-reason"
              />
              {m.error && (
                <p id={ids.why} role="alert" className="mt-1 text-red-800">
                  {m.error.message}
                </p>
              )}
              <button
                type="submit"
                disabled={m.isPending || !reason.trim()}
                className="mt-2 rounded bg-amber-700 px-3 py-1 font-medium text-white disabled:cursor-not-allowed disabled:bg-slate-400"
                data-testid="rollback-submit"
              >
                {m.isPending ? 'Opening the pull request…' : 'Open the pull request'}
              </button>
            </form>
          )}
        </ModalDialog>
      )}
    </>
  );
}
