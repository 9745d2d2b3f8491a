// Event sinks (admins on every cluster): where the evidence goes as signed CDEvents, how far each sink has
// heard the chain, what it is retrying, and the records it never took (dead letters), each retried on demand.
import type { SinkStatus } from '../../../../api/sinks.ts';
import { Time } from '../../../components/time.tsx';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import { useRetryDeadLetter, useSinks } from '../api/sinks-queries.ts';

export function SinksPage() {
  useDocumentTitle('Event sinks');
  const q = useSinks();
  return (
    <section className="grid gap-4" aria-labelledby="sinks-h">
      <h1 id="sinks-h" className="text-xl font-semibold">
        Event sinks
      </h1>
      <p className="text-sm text-slate-600">
        Every release state and governance record, sent as a signed CDEvent to each sink in the order of the evidence
        chain. A record a sink never took is a dead letter: retry it here once the sink is fixed.
      </p>
      {q.isPending && <p className="text-slate-600">Loading…</p>}
      {q.isError && (
        <p role="alert" className="text-red-800">
          Cannot load the event sinks: {q.error.message}
        </p>
      )}
      {q.data && q.data.sinks.length === 0 && (
        <p className="text-sm text-slate-600">No event sink is configured (CONSOLE_EVENT_SINKS_FILE).</p>
      )}
      {q.data && q.data.sinks.length > 0 && !q.data.delivering && (
        <p className="text-sm text-slate-600">
          Another replica delivers (it holds the recorder Lease): the counts below are this replica’s.
        </p>
      )}
      {q.data?.sinks.map((s) => (
        <Sink key={s.name} sink={s} />
      ))}
    </section>
  );
}

function state(s: SinkStatus): { text: string; tone: string } {
  if (!s.running) return { text: 'not delivering here', tone: 'bg-slate-100 text-slate-700' };
  if (s.down) return { text: 'down', tone: 'bg-red-100 text-red-800' };
  if (s.retrying) return { text: 'retrying', tone: 'bg-amber-100 text-amber-900' };
  return { text: 'up', tone: 'bg-green-100 text-green-800' };
}

function Sink({ sink: s }: { sink: SinkStatus }) {
  const st = state(s);
  return (
    <article
      className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm"
      aria-labelledby={`sink-${s.name}`}
      data-testid="sink"
      data-name={s.name}
    >
      <h2 id={`sink-${s.name}`} className="flex flex-wrap items-center gap-2 font-semibold">
        {s.name}
        <span className={`rounded px-1.5 text-xs font-medium ${st.tone}`} data-testid="sink-state">
          {st.text}
        </span>
        <span className="rounded bg-slate-100 px-1.5 text-xs font-medium text-slate-700" data-testid="sink-format">
          {s.format === 'cdevents'
            ? 'CDEvents'
            : s.format === 'slack'
              ? 'notifications (Slack)'
              : 'notifications (JSON)'}
        </span>
        <span className="text-sm font-normal text-slate-600 wrap-anywhere">{s.url}</span>
      </h2>
      <dl className="mt-2 grid grid-cols-[max-content_1fr] gap-x-3 gap-y-0.5 text-sm">
        <dt className="text-slate-600">Heard up to</dt>
        <dd>
          {s.cursor ?? '—'}
          {s.lag !== null && s.lag > 0 ? ` (${s.lag} records behind)` : ''}
        </dd>
        <dt className="text-slate-600">Delivered</dt>
        <dd data-testid="sink-delivered">{s.delivered}</dd>
        <dt className="text-slate-600">Failed attempts</dt>
        <dd>{s.failedAttempts}</dd>
        {s.retrying && (
          <>
            <dt className="text-slate-600">Retrying</dt>
            <dd>
              record {s.retrying.seq}, attempt {s.retrying.attempts}, since <Time iso={s.retrying.since} />
            </dd>
          </>
        )}
        {s.lastError && (
          <>
            <dt className="text-slate-600">Last error</dt>
            <dd className="wrap-anywhere">{s.lastError}</dd>
          </>
        )}
        {s.lastDeliveredAt && (
          <>
            <dt className="text-slate-600">Last delivered</dt>
            <dd>
              <Time iso={s.lastDeliveredAt} />
            </dd>
          </>
        )}
      </dl>
      <h3 className="mt-3 font-semibold">
        Dead letters ({s.deadLetterCount}
        {s.deadLetterCount > s.deadLetters.length ? `, the first ${s.deadLetters.length} listed` : ''})
      </h3>
      {s.deadLetterCount === 0 ? (
        <p className="text-sm text-slate-600">None: the sink took every record.</p>
      ) : (
        <DeadLetters sink={s} />
      )}
    </article>
  );
}

function DeadLetters({ sink: s }: { sink: SinkStatus }) {
  const retry = useRetryDeadLetter();
  return (
    <>
      {retry.isError && (
        <p role="alert" className="text-sm text-red-800" data-testid="sink-retry-error">
          {retry.error.message}
        </p>
      )}
      <table className="mt-1 w-full text-left text-sm" data-testid="dead-letters">
        <thead>
          <tr className="text-slate-600">
            <th scope="col">Record</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last error</th>
            <th scope="col">Given up</th>
            <th scope="col">
              <span className="sr-only">Retry</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {s.deadLetters.map((d) => (
            <tr key={d.seq} className="border-t border-slate-100" data-testid="dead-letter" data-seq={d.seq}>
              <td>#{d.seq}</td>
              <td>{d.attempts}</td>
              <td className="wrap-anywhere">{d.lastError}</td>
              <td>
                <Time iso={d.deadAt} />
              </td>
              <td>
                <button
                  type="button"
                  className="rounded border border-slate-300 px-2 py-0.5 hover:bg-slate-50 disabled:opacity-50"
                  disabled={retry.isPending}
                  onClick={() => retry.mutate({ sink: s.name, seq: d.seq })}
                >
                  Retry #{d.seq}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
