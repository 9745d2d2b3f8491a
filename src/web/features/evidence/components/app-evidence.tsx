import { useQuery } from '@tanstack/react-query';
import { evidenceForAppQueryOptions } from '../api/evidence-queries.ts';
import { evidenceText } from '../lib/evidence-text.ts';
import { Time } from '../../../components/time.tsx';
import { usePermission } from '../../../lib/use-permission.ts';

export function AppEvidence({ appId, cluster, env }: { appId: string; cluster: string; env: string }) {
  const perm = usePermission('evidence.read', { cluster, env });
  const q = useQuery({ ...evidenceForAppQueryOptions(appId), enabled: perm.allowed });
  return (
    <section className="mt-4 rounded-lg border border-slate-200 bg-white p-4" data-testid="app-evidence">
      <h2 className="mb-2 font-semibold">Evidence</h2>
      {!perm.allowed && (
        <p className="text-sm text-slate-500" data-testid="evidence-hidden">
          {perm.reason}.
        </p>
      )}
      {perm.allowed && q.isPending && <p className="text-sm text-slate-500">Loading…</p>}
      {q.data && q.data.events.length === 0 && <p className="text-sm text-slate-500">No evidence recorded yet.</p>}
      <ol className="space-y-1 text-sm">
        {q.data?.events.map((e) => (
          <li key={e.seq} className="flex flex-wrap gap-x-3" data-testid="evidence-event" data-type={e.type}>
            <span className="w-56 shrink-0 font-mono text-xs text-slate-600">
              <Time iso={e.time} />
            </span>
            <span className="w-48 shrink-0">{e.type}</span>
            <span className="min-w-0 flex-1 basis-64 font-mono text-xs wrap-anywhere" data-testid="evidence-text">
              {evidenceText(e)}
            </span>
            <span className="min-w-0 text-slate-500 wrap-anywhere">by {e.actor}</span>
            <span className="ml-auto font-mono text-[10px] text-slate-500" title={e.hash}>
              #{e.seq} {e.hash.slice(0, 10)}
            </span>
          </li>
        ))}
      </ol>
    </section>
  );
}
