// The guided "Try it" page (sandbox mode only): a card per scenario — its story, a button, its steps while it
// runs, then where to look — and the reset that puts the sandbox back to its seed, with its progress.
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { can } from '../../../../domain/access.ts';
import { sessionQueryOptions } from '../../../lib/session.ts';
import type { TryItJob, TryItLink, TryItScenario, TryItStep } from '../../../../api/tryit.ts';
import { ApiError } from '../../../lib/api-client.ts';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import { useResetSandbox, useRunScenario, useTryItJob, useTryItScenarios } from '../api/tryit-queries.ts';

const STEP_MARK: Record<TryItStep['state'], string> = {
  pending: '○',
  running: '…',
  done: '✓',
  failed: '✗',
  skipped: '–',
};

/** The links the signed-in user may open: one to a page they may not see is left out (it would only say "no"). */
function Links({ links }: { links: TryItLink[] }) {
  const s = useQuery(sessionQueryOptions());
  const grants = s.data?.user.grants ?? [];
  const mine = links.filter((l) => !l.needs || can(grants, l.needs.action, l.needs.env ? { env: l.needs.env } : {}));
  return (
    <ul className="flex flex-wrap gap-3" data-testid="tryit-links">
      {mine.map((l) => (
        <li key={l.href + l.label}>
          <Link to={l.href} className="text-teal-700 underline">
            {l.label}
          </Link>
        </li>
      ))}
    </ul>
  );
}

function JobProgress({ job }: { job: TryItJob }) {
  return (
    <div className="mt-2" data-testid="tryit-job" data-state={job.state} data-job={job.id}>
      <ol className="space-y-0.5 text-sm">
        {job.steps.map((s) => (
          <li key={s.name} data-testid="tryit-step" data-state={s.state} className="flex gap-2">
            <span aria-hidden="true" className="w-4 shrink-0 text-center">
              {STEP_MARK[s.state]}
            </span>
            {/* min-w-0 and wrap-anywhere: a sha256 in a step's detail wraps instead of widening the page */}
            <span className="min-w-0 wrap-anywhere">
              {s.name}
              <span className="sr-only"> ({s.state})</span>
              {s.detail && <span className="ml-1 font-mono text-xs text-slate-600">— {s.detail}</span>}
            </span>
          </li>
        ))}
      </ol>
      <p className="mt-1 text-xs text-slate-500 wrap-anywhere" role="status">
        {job.state === 'running' && `running, started by ${job.startedBy}…`}
        {job.state === 'done' && `done (started by ${job.startedBy}; evidence #${job.intentSeq})`}
        {job.state === 'failed' && `failed (started by ${job.startedBy}; evidence #${job.intentSeq})`}
      </p>
      {job.error && (
        <p className="text-sm text-red-800 wrap-anywhere" role="alert" data-testid="tryit-error">
          {job.error}
        </p>
      )}
    </div>
  );
}

const errorText = (e: unknown) =>
  e instanceof ApiError ? e.message : e instanceof Error ? e.message : 'the request failed';

/**
 * The run a card shows: the one just started, or the last one. While a new run starts (the request in flight, its
 * job not read yet) nothing of the previous run: its "done", steps and links would read as the new run's (the
 * second round of every card in a row, issue 39).
 */
function useShownJob(last: TryItJob | undefined, pending: boolean, jobId: string | undefined) {
  const live = useTryItJob(jobId ?? (last?.state === 'running' ? last.id : undefined));
  const starting = pending || (jobId !== undefined && live.data?.job.id !== jobId);
  return { job: starting ? undefined : (live.data?.job ?? last), starting };
}

function Starting() {
  return (
    <p className="mt-2 text-sm text-slate-600" data-testid="tryit-starting" role="status">
      Starting…
    </p>
  );
}

function ScenarioCard({
  s,
  last,
  canRun,
  busy,
}: {
  s: TryItScenario;
  last: TryItJob | undefined;
  canRun: boolean;
  busy: boolean;
}) {
  const run = useRunScenario();
  const [jobId, setJobId] = useState<string | undefined>(undefined);
  const { job, starting } = useShownJob(last, run.isPending, jobId);
  const running = job?.state === 'running';
  return (
    <li
      className="min-w-0 rounded-lg border border-slate-200 bg-white p-4 shadow-sm"
      data-testid="tryit-card"
      data-scenario={s.id}
    >
      <h2 className="font-semibold">{s.title}</h2>
      <p className="mt-1 text-sm text-slate-700">{s.story}</p>
      {s.leaves && (
        // what a run leaves changed, and how to finish or undo it (issue 39): said before the button, never a
        // silent leftover that breaks the next card
        <p className="mt-1 text-xs text-slate-600" data-testid="tryit-leaves">
          <span className="font-medium">It leaves:</span> {s.leaves}
        </p>
      )}
      {s.needs && (
        <p className="mt-2 rounded border border-amber-200 bg-amber-50 p-2 text-sm" data-testid="tryit-needs">
          {s.needs.text}{' '}
          <Link to={s.needs.link.href} className="text-teal-700 underline">
            {s.needs.link.label}
          </Link>
        </p>
      )}
      <button
        type="button"
        className="mt-3 rounded bg-teal-700 px-3 py-1.5 text-sm text-white disabled:opacity-50"
        disabled={!canRun || busy || run.isPending}
        onClick={() =>
          run.mutate(s.id, {
            onSuccess: (r) => setJobId(r.job.id),
          })
        }
        data-testid="tryit-run"
      >
        {running ? 'Running…' : s.button}
      </button>
      {run.isError && (
        <p className="mt-2 text-sm text-red-800" role="alert" data-testid="tryit-refused">
          {errorText(run.error)}
        </p>
      )}
      {starting && <Starting />}
      {job && <JobProgress job={job} />}
      {job?.state === 'done' && (
        <div className="mt-2 rounded border border-teal-200 bg-teal-50 p-2 text-sm" data-testid="tryit-look">
          <p className="mb-1">Where to look: {s.look}</p>
          <Links links={job.links} />
        </div>
      )}
    </li>
  );
}

function ResetPanel({ last, canRun, busy }: { last: TryItJob | undefined; canRun: boolean; busy: boolean }) {
  const reset = useResetSandbox();
  const [jobId, setJobId] = useState<string | undefined>(undefined);
  const { job, starting } = useShownJob(last, reset.isPending, jobId);
  return (
    <section className="rounded-lg border border-slate-300 bg-slate-50 p-4" data-testid="tryit-reset">
      <h2 className="font-semibold">Reset the sandbox</h2>
      <p className="mt-1 text-sm text-slate-700">
        Undoes every card: Git’s main gets the seed’s files back (one commit), business endpoints answer normally, every
        kube-apiserver runs, open pull requests are closed, and Flux applies the seed everywhere. A freeze still holding
        an app is not ended: end it on its page.
      </p>
      <button
        type="button"
        className="mt-3 rounded border border-slate-400 bg-white px-3 py-1.5 text-sm disabled:opacity-50"
        disabled={!canRun || busy || reset.isPending}
        onClick={() => reset.mutate(undefined, { onSuccess: (r) => setJobId(r.job.id) })}
        data-testid="tryit-reset-button"
      >
        {job?.state === 'running' ? 'Resetting…' : 'Reset to the seed'}
      </button>
      {reset.isError && (
        <p className="mt-2 text-sm text-red-800" role="alert">
          {errorText(reset.error)}
        </p>
      )}
      {starting && <Starting />}
      {job && <JobProgress job={job} />}
    </section>
  );
}

export function TryItPage() {
  useDocumentTitle('Try it');
  const q = useTryItScenarios();
  if (q.isPending) return <p className="text-slate-500">Loading…</p>;
  if (q.isError)
    return (
      <div className="rounded border border-slate-200 bg-white p-4" role="alert">
        {q.error instanceof ApiError && q.error.status === 404
          ? 'Try it is only available when the console runs against its own sandbox (npm start with no kubeconfig).'
          : `Cannot load the scenarios: ${q.error.message}`}
      </div>
    );
  const { scenarios, canRun, running, recent } = q.data;
  const lastOf = (key: string) => recent.find((j) => (j.scenario ?? j.kind) === key);
  return (
    <div className="space-y-4">
      <header>
        <h1 className="text-xl font-semibold">Try it</h1>
        <p className="text-sm text-slate-700">
          Each card makes something happen in this console’s sandbox — with the sandbox’s own tools, as the people and
          controllers of the story would — and says where to look. Every run is recorded as evidence.
        </p>
        {!canRun && (
          <p className="mt-1 text-sm text-amber-800" data-testid="tryit-cannot-run">
            You need the developer, oncall or admin role to run scenarios.
          </p>
        )}
        {running && (
          <p className="mt-1 text-sm text-slate-600" role="status" data-testid="tryit-busy">
            “{running.title}” is running (started by {running.startedBy}): one at a time.
          </p>
        )}
      </header>
      {/* minmax(0, 1fr) columns and min-w-0 cards: a long value in a card wraps, never widens the page */}
      <ul className="grid grid-cols-1 gap-4 md:grid-cols-2">
        {scenarios.map((s) => (
          <ScenarioCard key={s.id} s={s} last={lastOf(s.id)} canRun={canRun} busy={!!running} />
        ))}
      </ul>
      <ResetPanel last={lastOf('reset')} canRun={canRun} busy={!!running} />
    </div>
  );
}
