import type { PrunePreview } from '../../../../api/schemas.ts';
import { TimeAgo } from '../../../components/time-ago.tsx';

const where = (r: { namespace?: string | undefined; name: string }) =>
  r.namespace ? `${r.namespace}/${r.name}` : r.name;

/** "3 objects: 1 RoleBinding, 2 Secret" — what a deletion takes with it, by kind. */
function byKind(refs: Array<{ kind: string }>): string {
  const n = new Map<string, number>();
  for (const r of refs) n.set(r.kind, (n.get(r.kind) ?? 0) + 1);
  const kinds = [...n].sort(([a], [b]) => a.localeCompare(b)).map(([k, c]) => `${c} ${k}`);
  return `${refs.length} object${refs.length === 1 ? '' : 's'}: ${kinds.join(', ')}`;
}

/** A deletable object with no journal entry: what its preview's state means for it (never "will be" once it is over). */
function Undecided({ status }: { status: PrunePreview['status'] }) {
  switch (status) {
    case 'pending':
      return <span className="text-amber-800">will be deleted once approved</span>;
    case 'approved':
    case 'executing':
      return <span className="text-amber-800">will be deleted</span>;
    case 'void':
      return <span className="text-slate-500">not deleted: the preview is void</span>;
    case 'rejected':
      return <span className="text-slate-500">not deleted: the prune was rejected</span>;
    default:
      return <span className="text-slate-500">not deleted</span>;
  }
}

/**
 * Per object: kind, name, when it was created, last writer, finalizers, what cascades, and whether it will be deleted: not when it
 * is protected, when a protected object goes with it (blocked), or when what goes with it is unknown.
 */
export function PruneCandidates({ preview }: { preview: PrunePreview }) {
  if (!preview.candidates.length) return null;
  const state = new Map(preview.journal.map((j) => [j.object, j]));
  return (
    // the table scrolls in its own box on a narrow screen, never the page (relative: its sr-only caption too)
    <div className="relative mt-4 overflow-x-auto">
      <table className="w-full min-w-[48rem] text-left text-sm" data-testid="prune-candidates">
        <caption className="sr-only">Objects the prune would delete</caption>
        <thead className="text-xs text-slate-500">
          <tr>
            <th className="py-1 pr-3">Kind</th>
            <th className="py-1 pr-3">Object</th>
            <th className="py-1 pr-3">Created</th>
            <th className="py-1 pr-3">Last writer</th>
            <th className="py-1 pr-3">Finalizers</th>
            <th className="py-1 pr-3">Cascades to</th>
            <th className="py-1">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {preview.candidates.map((c) => {
            const j = state.get(c.id);
            return (
              <tr
                key={c.id}
                className="border-t border-slate-100 align-top"
                data-testid="prune-candidate"
                data-name={c.ref.name}
              >
                <td className="py-1 pr-3">{c.ref.kind}</td>
                <td className="py-1 pr-3 font-mono wrap-anywhere">{where(c.ref)}</td>
                <td className="py-1 pr-3 whitespace-nowrap">{c.createdAt ? <TimeAgo iso={c.createdAt} /> : '—'}</td>
                <td className="py-1 pr-3 font-mono wrap-anywhere">{c.lastWriter ?? '—'}</td>
                <td className="py-1 pr-3 font-mono wrap-anywhere">
                  {c.finalizers.length ? c.finalizers.join(', ') : '—'}
                </td>
                <td className="py-1 pr-3 wrap-anywhere">
                  {c.cascadesUnknown && (
                    <p className="text-amber-800" data-testid="cascades-unknown">
                      unknown: {c.cascadesUnknown}
                      {c.cascades.length ? ` (${c.cascades.length} objects known)` : ''}
                    </p>
                  )}
                  {c.cascades.length ? (
                    <details>
                      <summary className="cursor-pointer">{byKind(c.cascades)}</summary>
                      <ul className="font-mono text-xs">
                        {c.cascades.map((r) => (
                          <li key={`${r.kind}/${where(r)}`}>
                            {r.kind} {where(r)}
                          </li>
                        ))}
                      </ul>
                    </details>
                  ) : c.cascadesUnknown ? null : (
                    '—'
                  )}
                </td>
                <td className="py-1 wrap-anywhere">
                  {c.protectedBy ? (
                    <span className="text-emerald-800" data-testid="protected">
                      protected: <code>{c.protectedBy}</code> — never deleted
                    </span>
                  ) : c.blockedBy ? (
                    <span className="text-emerald-800" data-testid="blocked">
                      blocked: {c.blockedBy} — not deleted
                    </span>
                  ) : c.cascadesUnknown ? (
                    <span className="text-amber-800" data-testid="unknown-outcome">
                      not deleted: what it would take with it is unknown
                    </span>
                  ) : !c.deletable ? (
                    <span className="text-slate-500">not live: nothing to delete</span>
                  ) : j ? (
                    <span className={j.state === 'failed' ? 'text-red-700' : 'text-slate-700'}>
                      {j.state}
                      {j.detail ? ` (${j.detail})` : ''}
                    </span>
                  ) : (
                    <Undecided status={preview.status} />
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
