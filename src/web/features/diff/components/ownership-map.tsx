import type { DiffResponse } from '../../../../api/schemas.ts';
import { managerLabel } from '../../../../domain/field-managers.ts';
import { fixFor } from '../lib/diff-view.ts';

/** Managers × fields for the whole app, conflicts highlighted, each with a ready-to-copy fix. */
export function OwnershipMap({ rows, controller }: { rows: DiffResponse['ownership']; controller: 'flux' | 'argocd' }) {
  if (!rows.length) return null;
  return (
    <div className="mt-3" data-testid="ownership-map">
      <h3 className="mb-1 text-sm font-semibold">Field ownership</h3>
      {/* relative: the scroll box also holds what is positioned inside it */}
      <div className="relative overflow-x-auto">
        <table className="w-full min-w-[32rem] text-xs">
          <thead>
            <tr className="text-left text-slate-500">
              <th className="px-2">Manager</th>
              <th>Fields</th>
              <th>Objects</th>
              <th>Conflicts</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr
                key={r.manager}
                className={`border-t border-slate-100 align-top ${r.conflicts.length ? 'bg-red-50' : ''}`}
                data-testid="ownership-row"
                data-manager={r.manager}
              >
                <td className="px-2 font-medium wrap-anywhere">
                  {r.manager}
                  {managerLabel(r.manager) !== r.manager && (
                    <span className="ml-1 font-normal text-slate-500">({managerLabel(r.manager)})</span>
                  )}
                </td>
                <td>{r.fields}</td>
                <td>{r.objects}</td>
                <td className="wrap-anywhere">
                  {r.conflicts.length === 0 ? (
                    '—'
                  ) : (
                    <ul>
                      {r.conflicts.slice(0, 20).map((c) => {
                        const [kind = '', ...rest] = c.object.split(' ');
                        const name = rest.join(' ').split('/').pop() ?? '';
                        return (
                          <li key={`${c.object}-${c.path}`}>
                            <span className="font-mono">
                              {c.object}: {c.path}
                            </span>{' '}
                            (with {c.with.join(', ')})
                            <details>
                              <summary className="cursor-pointer text-teal-700">fix</summary>
                              <pre className="whitespace-pre-wrap rounded bg-white p-1">
                                {fixFor(controller, { group: '', kind, name }, c.path, r.manager)}
                              </pre>
                            </details>
                          </li>
                        );
                      })}
                    </ul>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
