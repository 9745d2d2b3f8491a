import { useNavigate } from 'react-router';
import { usePermission } from '../../../lib/use-permission.ts';
import { useCreatePrunePreview } from '../api/create-prune-preview.ts';

/** "Preview prune": plans the app's prune (nothing is deleted) and opens the preview. */
export function PreviewPruneButton({ app }: { app: { id: string; cluster: string; env: string } }) {
  const perm = usePermission('prune.request', { cluster: app.cluster, env: app.env });
  const m = useCreatePrunePreview(app.id);
  const navigate = useNavigate();
  return (
    <button
      type="button"
      data-testid="preview-prune"
      disabled={!perm.allowed || m.isPending}
      title={perm.allowed ? 'See what a prune would delete (nothing is deleted now)' : perm.reason}
      onClick={() => m.mutate(undefined, { onSuccess: (r) => void navigate(`/prune-previews/${r.preview.id}`) })}
      className="rounded border border-amber-700 px-2 py-1 text-xs font-medium text-amber-800 disabled:cursor-not-allowed disabled:border-slate-300 disabled:text-slate-400"
    >
      {m.isPending ? 'Planning…' : 'Preview prune'}
    </button>
  );
}
