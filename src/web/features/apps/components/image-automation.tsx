// Flux image automation on the app page (issue 26 part 5): which automation writes this app's image tags to
// Git, where it pushes (a branch someone must open a pull request from, or straight to the branch the app
// follows), the author it commits as, its last push; each policy's rule and choice, and the tags its registry
// scan found. Unknown (an image kind the console could not read) is said, never shown as "none".
import type { ImageAutomationDto } from '../../../../api/schemas.ts';
import { Tag } from '../../../components/badges.tsx';
import { TimeAgo } from '../../../components/time-ago.tsx';

type Ready = ImageAutomationDto['policies'][number]['ready'];
const READY_TONE = { True: 'teal', False: 'amber', Unknown: 'slate' } as const;
const READY_TEXT = { True: 'Ready', False: 'not Ready', Unknown: 'Ready unknown' } as const;

function ReadyTag({ ready }: { ready: Ready }) {
  return (
    <Tag tone={READY_TONE[ready.status]} title={[ready.reason, ready.message].filter(Boolean).join(': ')}>
      {READY_TEXT[ready.status]}
    </Tag>
  );
}

export function ImageAutomation({ data }: { data: ImageAutomationDto | undefined }) {
  if (!data) return null;
  if (data.status === 'unknown')
    return (
      <section className="mt-4 rounded-lg border border-slate-200 bg-white p-4" data-testid="image-automation">
        <h2 className="mb-2 font-semibold">Image automation</h2>
        <p className="text-sm text-amber-900" role="status">
          Unknown: {data.why ?? 'the image automation could not be read'}
        </p>
      </section>
    );
  if (data.automations.length === 0) return null;
  const repoOf = (p: ImageAutomationDto['policies'][number]) =>
    data.repositories.find((r) => r.namespace === p.repository.namespace && r.name === p.repository.name);
  return (
    <section
      className="mt-4 rounded-lg border border-slate-200 bg-white p-4"
      data-testid="image-automation"
      aria-labelledby="image-automation-h"
    >
      <h2 id="image-automation-h" className="mb-2 font-semibold">
        Image automation
      </h2>
      <ul className="flex flex-col gap-2 text-sm">
        {data.automations.map((a) => {
          const pushesTo = a.pushBranch ?? a.checkoutBranch;
          const direct = !a.pushBranch || a.pushBranch === a.checkoutBranch;
          return (
            <li key={`${a.namespace}/${a.name}`} data-testid="image-automation-object">
              <div className="flex flex-wrap items-center gap-2">
                <span className="font-mono">
                  ImageUpdateAutomation {a.namespace}/{a.name}
                </span>
                <ReadyTag ready={a.ready} />
                {a.suspended && <Tag tone="amber">suspended</Tag>}
              </div>
              <p className="text-slate-700">
                Writes <span className="font-mono">{a.updatePath || '/'}</span> of {a.source.kind} {a.source.name}
                {a.checkoutBranch ? (
                  <>
                    {' '}
                    from <span className="font-mono">{a.checkoutBranch}</span>
                  </>
                ) : null}{' '}
                and pushes to <span className="font-mono">{pushesTo ?? '—'}</span>{' '}
                <span className="text-slate-500">
                  {direct
                    ? '(straight to the branch: no pull request, so no review)'
                    : '(a branch: its changes reach the app through a pull request)'}
                </span>
              </p>
              <p className="text-slate-700">
                Commits as{' '}
                <span className="font-mono break-all">
                  {a.author.name} &lt;{a.author.email}&gt;
                </span>
                ; last push{' '}
                {a.lastPushCommit ? (
                  <>
                    <span className="font-mono" data-testid="image-automation-last-push">
                      {a.lastPushCommit.slice(0, 8)}
                    </span>{' '}
                    <TimeAgo iso={a.lastPushTime} />
                  </>
                ) : (
                  'none yet'
                )}
              </p>
            </li>
          );
        })}
      </ul>
      {data.policies.length > 0 && (
        <table className="mt-3 w-full text-sm" data-testid="image-policies">
          <caption className="sr-only">Image policies and their registries</caption>
          <thead>
            <tr className="text-left text-slate-600 [&>th]:pr-3 [&>th]:pb-1 [&>th]:font-medium">
              <th scope="col">Policy</th>
              <th scope="col">Rule</th>
              <th scope="col">Chosen</th>
              <th scope="col">Registry tags</th>
            </tr>
          </thead>
          <tbody>
            {data.policies.map((p) => {
              const r = repoOf(p);
              return (
                <tr
                  key={`${p.namespace}/${p.name}`}
                  className="border-t border-slate-100 align-top"
                  data-testid="image-policy"
                >
                  <td className="pr-3">
                    <span className="font-mono">{p.name}</span> <ReadyTag ready={p.ready} />
                  </td>
                  <td className="pr-3 font-mono">
                    {p.rule}
                    {p.filter && <span className="block text-xs text-slate-500">tags matching {p.filter}</span>}
                  </td>
                  <td className="pr-3" data-testid="image-policy-chosen">
                    {p.chosen ? (
                      <>
                        <span className="font-mono">{p.chosen.tag}</span>
                        {p.previous && p.previous.tag !== p.chosen.tag && (
                          <span className="text-slate-500"> (was {p.previous.tag})</span>
                        )}
                        {p.chosen.digest && (
                          <span className="block font-mono text-xs break-all text-slate-500">{p.chosen.digest}</span>
                        )}
                      </>
                    ) : (
                      <span className="text-amber-900">
                        nothing chosen{p.ready.message ? `: ${p.ready.message}` : ''}
                      </span>
                    )}
                  </td>
                  <td className="break-all">
                    <span className="font-mono text-xs">{r?.image ?? p.repository.image ?? p.repository.name}</span>
                    {r && (
                      <span className="block text-xs text-slate-600" data-testid="image-repository-tags">
                        {r.tagCount ?? '?'} tags{r.latestTags.length ? `: ${r.latestTags.join(', ')}` : ''}
                        {r.scanTime && (
                          <>
                            {' '}
                            · scanned <TimeAgo iso={r.scanTime} />
                          </>
                        )}
                      </span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
