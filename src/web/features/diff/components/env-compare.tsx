import { useQuery } from '@tanstack/react-query';
import { EnvCompareResponse, appPath } from '../../../../api/schemas.ts';
import { shortRevision } from '../../../../domain/app.ts';
import { apiGet } from '../../../lib/api-client.ts';

const show = (v: unknown) => (v === undefined ? '∅' : typeof v === 'string' ? v : JSON.stringify(v));

/** The same app's rendered objects across environments: images (digest or mutable tag) and differing fields. */
export function EnvCompare({ appId }: { appId: string }) {
  const q = useQuery({
    queryKey: ['environments', appId],
    queryFn: ({ signal }) => apiGet(`/api/apps/${appPath(appId)}/environments`, EnvCompareResponse, { signal }),
    staleTime: 15_000,
  });
  if (q.isPending) return <p className="mt-4 text-sm text-slate-500">Rendering every environment…</p>;
  if (q.isError) return <p className="mt-4 text-sm text-red-700">Cannot compare environments: {q.error.message}</p>;
  const envs = q.data.envs;
  const hidden = q.data.hiddenEnvironments ?? 0;
  const hiddenLine = hidden > 0 && (
    <p className="mb-2 text-sm text-slate-600" data-testid="env-compare-hidden">
      {hidden === 1 ? '1 more environment' : `${hidden} more environments`} of this app {hidden === 1 ? 'is' : 'are'}{' '}
      hidden: you may not read {hidden === 1 ? 'it' : 'them'}.
    </p>
  );
  if (envs.length < 2)
    return hiddenLine ? (
      <section className="mt-4 rounded-lg border border-slate-200 bg-white p-4" data-testid="env-compare">
        <h2 className="mb-2 font-semibold">Across environments</h2>
        {hiddenLine}
      </section>
    ) : null;
  return (
    <section className="mt-4 rounded-lg border border-slate-200 bg-white p-4" data-testid="env-compare">
      <h2 className="mb-2 font-semibold">Across environments</h2>
      {hiddenLine}
      <div className="relative mb-3 overflow-x-auto">
        <table className="w-full min-w-[32rem] text-xs [&_td]:px-2 [&_td]:py-1 [&_th]:px-2 [&_th]:py-1">
          <thead>
            <tr className="text-left text-slate-600">
              <th scope="col">Image</th>
              {envs.map((e) => (
                <th scope="col" key={e.env}>
                  {e.env}{' '}
                  <span className="font-normal">
                    ({e.cluster}
                    {e.revision ? ` @ ${shortRevision(e.revision)}` : ''})
                  </span>
                  {e.error && <div className="font-normal text-red-700 wrap-anywhere">{e.error}</div>}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {q.data.images.map((i) => (
              <tr
                key={`${i.object}-${i.container}`}
                className="border-t border-slate-100 align-top"
                data-testid="env-image"
                data-object={i.object}
                data-container={i.container}
              >
                <td className="wrap-anywhere">
                  {i.object} · {i.container}
                </td>
                {envs.map((e) => {
                  const v = i.byEnv[e.env];
                  return (
                    <td key={e.env} className="break-all font-mono" data-env={e.env} data-pinned={v?.pinned ?? ''}>
                      {v ? v.ref : '∅'}{' '}
                      {v && (
                        <span
                          className={`rounded px-1 font-sans ${v.pinned === 'digest' ? 'bg-emerald-100 text-emerald-800' : 'bg-amber-100 text-amber-900'}`}
                        >
                          {v.pinned === 'digest' ? 'digest' : 'mutable tag'}
                        </span>
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <details>
        <summary className="cursor-pointer text-sm text-teal-700">
          {q.data.fields.length} fields differ between environments
        </summary>
        <div className="relative mt-1 overflow-x-auto">
          <table className="w-full min-w-[32rem] text-xs [&_td]:px-2 [&_td]:py-1" data-testid="env-fields">
            <tbody>
              {q.data.fields.map((f) => (
                <tr key={`${f.object}-${f.path}`} className="border-t border-slate-100 align-top">
                  <td className="wrap-anywhere">{f.object}</td>
                  <td className="break-all font-mono">{f.path}</td>
                  {envs.map((e) => (
                    <td key={e.env} className="break-all font-mono">
                      {show(f.byEnv[e.env])}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}
