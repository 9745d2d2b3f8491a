// On a frozen app's page: the live changes made to this app since the freeze began (read-only; the decisions
// per change are made on the freeze page, where the unfreeze is). Unknown is said, never "no changes".
import { Link } from 'react-router';
import { Time } from '../../../components/time.tsx';
import { useFreezeChanges } from '../api/freeze-queries.ts';
import { objectText, valueText } from '../lib/freeze-text.ts';

export function AppFrozenChanges({ freezeId, appId }: { freezeId: string; appId: string }) {
  const q = useFreezeChanges(freezeId, true);
  const changes = (q.data?.changes ?? []).filter((c) => c.appId === appId);
  const unknown = (q.data?.unknown ?? []).find((u) => u.appId === appId);
  return (
    <section
      className="mt-3 rounded-lg border border-sky-300 bg-white p-3"
      aria-labelledby="app-frozen-changes-h"
      data-testid="app-frozen-changes"
    >
      <h2 id="app-frozen-changes-h" className="font-semibold">
        Live changes since the freeze began
      </h2>
      {q.isPending && <p className="text-sm text-slate-500">Loading…</p>}
      {q.isError && (
        <p role="alert" className="text-sm text-red-800">
          Changes unknown: {q.error.message}
        </p>
      )}
      {unknown && (
        <p role="alert" className="text-sm text-amber-900 wrap-anywhere">
          Changes unknown: {unknown.reason}
        </p>
      )}
      {q.data && !unknown && changes.length === 0 && (
        <p className="text-sm text-slate-600">No live change since the freeze began.</p>
      )}
      {changes.length > 0 && (
        <ul className="mt-1 space-y-1 text-sm">
          {changes.map((c) => (
            <li key={c.id} data-testid="app-frozen-change" className="flex flex-wrap gap-x-2 wrap-anywhere">
              <span className="min-w-0">{objectText(c.ref)}</span>
              <code className="min-w-0">{c.path}</code>
              <span className="min-w-0">
                {valueText(c.git)} → {valueText(c.live)}
              </span>
              <span className="min-w-0 text-slate-600">
                by {c.manager}, <Time iso={c.time} />
              </span>
            </li>
          ))}
        </ul>
      )}
      <p className="mt-1 text-sm">
        <Link className="text-teal-800 underline" to={`/freezes/${encodeURIComponent(freezeId)}`}>
          Decide per change and unfreeze on the freeze page
        </Link>
      </p>
    </section>
  );
}
