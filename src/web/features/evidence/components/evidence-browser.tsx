// The global evidence browser: filters and a text search in the URL, keyset pages ("Load older"), each
// event's hash, previous hash, seq and data on demand, "Verify chain" for auditors, and exports of what is shown.
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { Fragment, useId, useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import type { EvidenceEventSchema, VerifyResponse } from '../../../../api/schemas.ts';
import { EVIDENCE_TYPES } from '../../../../domain/evidence.ts';
import type { z } from 'zod';
import { Time } from '../../../components/time.tsx';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import { usePermission } from '../../../lib/use-permission.ts';
import { evidenceBrowseQueryOptions, verifyChainQueryOptions } from '../api/evidence-queries.ts';
import { evidenceText } from '../lib/evidence-text.ts';
import {
  exportHref,
  filtersFromSearch,
  manifestsHref,
  searchFromFilters,
  type EvidenceFilters,
  type FilterKey,
} from '../lib/evidence-filters.ts';

type Event = z.infer<typeof EvidenceEventSchema>;

const INPUT = 'mt-0.5 block w-full rounded border border-slate-300 px-2 py-1 text-sm';

function Field({
  label,
  name,
  value,
  onChange,
  type = 'text',
}: {
  label: string;
  name: FilterKey;
  value: string | undefined;
  onChange: (k: FilterKey, v: string) => void;
  type?: 'text' | 'search' | 'datetime-local';
}) {
  const id = `${useId()}-${name}`;
  return (
    <div className="min-w-36 flex-1">
      <label htmlFor={id} className="text-xs font-medium text-slate-700">
        {label}
      </label>
      <input
        id={id}
        name={name}
        type={type}
        value={value ?? ''}
        onChange={(e) => onChange(name, e.target.value)}
        className={INPUT}
      />
    </div>
  );
}

function FiltersForm({ initial, onApply }: { initial: EvidenceFilters; onApply: (f: EvidenceFilters) => void }) {
  const [draft, setDraft] = useState(initial);
  const set = (k: FilterKey, v: string) => setDraft((d) => ({ ...d, [k]: v }));
  const typeId = useId();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onApply(draft);
  };
  return (
    <form role="search" aria-label="Filter evidence" onSubmit={submit} className="flex flex-wrap items-end gap-3">
      <Field label="Search (actor, type, app, data)" name="q" type="search" value={draft.q} onChange={set} />
      <Field label="Environment" name="env" value={draft.env} onChange={set} />
      <Field label="Cluster" name="cluster" value={draft.cluster} onChange={set} />
      <Field label="App" name="app" value={draft.app} onChange={set} />
      <Field label="Actor" name="actor" value={draft.actor} onChange={set} />
      <div className="min-w-36 flex-1">
        <label htmlFor={typeId} className="text-xs font-medium text-slate-700">
          Type
        </label>
        <select
          id={typeId}
          name="type"
          value={draft.type ?? ''}
          onChange={(e) => set('type', e.target.value)}
          className={INPUT}
        >
          <option value="">any type</option>
          {draft.type && !EVIDENCE_TYPES.includes(draft.type as (typeof EVIDENCE_TYPES)[number]) && (
            <option value={draft.type}>{draft.type}</option>
          )}
          {EVIDENCE_TYPES.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </div>
      <Field label="From (local time)" name="from" type="datetime-local" value={draft.from} onChange={set} />
      <Field label="To (local time)" name="to" type="datetime-local" value={draft.to} onChange={set} />
      <div className="flex gap-2">
        <button
          type="submit"
          className="rounded bg-teal-700 px-3 py-1 text-sm font-medium text-white hover:bg-teal-800"
        >
          Apply
        </button>
        <button
          type="button"
          className="rounded px-3 py-1 text-sm text-teal-800 underline"
          onClick={() => {
            setDraft({});
            onApply({});
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}

export function verifyText(r: VerifyResponse): string {
  if (r.ok)
    return `Chain intact: ${r.count} events, head ${r.head.slice(0, 16)}…${r.checkpoints !== undefined ? `; ${r.checkpoints} signed checkpoint${r.checkpoints === 1 ? '' : 's'} match` : ''}`;
  return `Chain broken at event ${r.brokenAt}: ${r.reason}`;
}

function VerifyChain() {
  const q = useQuery(verifyChainQueryOptions());
  return (
    <div className="flex flex-wrap items-center gap-3">
      <button
        type="button"
        onClick={() => void q.refetch()}
        disabled={q.isFetching}
        className="rounded border border-teal-700 px-3 py-1 text-sm font-medium text-teal-800 hover:bg-teal-50 disabled:opacity-60"
      >
        {q.isFetching ? 'Verifying…' : 'Verify chain'}
      </button>
      <p role="status" data-testid="verify-result" className="text-sm">
        {q.isError && <span className="text-red-800">Cannot verify: {q.error.message}</span>}
        {q.data && !q.isFetching && (
          <span className={q.data.ok ? 'text-emerald-800' : 'font-medium text-red-800'} data-ok={String(q.data.ok)}>
            {verifyText(q.data)}
          </span>
        )}
      </p>
    </div>
  );
}

function EventRows({ e }: { e: Event }) {
  const [open, setOpen] = useState(false);
  const detailId = `evidence-detail-${e.seq}`;
  return (
    <Fragment>
      <tr className="border-t border-slate-100 align-top" data-testid="evidence-row" data-seq={e.seq}>
        <td className="py-1 pr-2">
          <button
            type="button"
            aria-expanded={open}
            aria-controls={open ? detailId : undefined}
            aria-label={`${open ? 'Hide' : 'Show'} details of event #${e.seq}`}
            onClick={() => setOpen((o) => !o)}
            className="font-mono text-xs text-teal-800 underline"
          >
            #{e.seq}
          </button>
        </td>
        <td className="py-1 pr-2 font-mono text-xs whitespace-nowrap">
          <Time iso={e.time} />
        </td>
        <td className="py-1 pr-2">{e.type}</td>
        <td className="py-1 pr-2 wrap-anywhere">{e.actor}</td>
        <td className="py-1 pr-2 wrap-anywhere">{e.app ?? '—'}</td>
        <td className="py-1 pr-2">
          {e.cluster ?? '—'}
          {e.env ? ` / ${e.env}` : ''}
        </td>
        <td className="py-1 font-mono text-xs wrap-anywhere">{evidenceText(e)}</td>
      </tr>
      {open && (
        <tr id={detailId} data-testid="evidence-detail">
          <td colSpan={7} className="bg-slate-50 px-3 py-2">
            <dl className="grid grid-cols-1 gap-x-3 gap-y-1 text-xs sm:grid-cols-[8rem_minmax(0,1fr)]">
              <dt className="font-medium">Sequence</dt>
              <dd className="font-mono">{e.seq}</dd>
              <dt className="font-medium">Hash</dt>
              <dd className="font-mono break-all">{e.hash}</dd>
              <dt className="font-medium">Previous hash</dt>
              <dd className="font-mono break-all">{e.prevHash}</dd>
              <dt className="font-medium">Data</dt>
              <dd>
                <pre className="overflow-x-auto font-mono whitespace-pre-wrap wrap-anywhere">
                  {JSON.stringify(e.data, null, 2)}
                </pre>
              </dd>
            </dl>
          </td>
        </tr>
      )}
    </Fragment>
  );
}

export function EvidenceBrowser() {
  useDocumentTitle('Evidence');
  const [sp, setSp] = useSearchParams();
  const filters = filtersFromSearch(sp);
  const search = searchFromFilters(filters).toString();
  const read = usePermission('evidence.read', {});
  const verify = usePermission('evidence.verify', {});
  const q = useInfiniteQuery({ ...evidenceBrowseQueryOptions(filters), enabled: read.allowed });
  const events = q.data?.pages.flatMap((p) => p.events) ?? [];
  return (
    <div className="space-y-4 rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-xl font-semibold">Evidence</h1>
        <div className="ml-auto flex flex-wrap items-center gap-3 text-sm">
          {verify.allowed && <VerifyChain />}
          {/* only for who may read evidence: for anyone else the server answers 403, which would download as a file */}
          {read.allowed && (
            <>
              <a href={exportHref(filters, 'jsonl')} download className="text-teal-800 underline" data-testid="export">
                Export JSONL
              </a>
              <a href={exportHref(filters, 'csv')} download className="text-teal-800 underline" data-testid="export">
                Export CSV
              </a>
              <a
                href={manifestsHref(filters)}
                download
                className="text-teal-800 underline"
                data-testid="export"
                title="the manifests of the releases this export records, for cli evidence verify --manifests"
              >
                Export manifests
              </a>
            </>
          )}
        </div>
      </div>
      {/* keyed by the URL: back/forward and "Clear" put the inputs back to what the URL says */}
      <FiltersForm key={search} initial={filters} onApply={(f) => setSp(searchFromFilters(f), { replace: false })} />
      {!read.allowed && <p className="text-sm text-slate-600">{read.reason}.</p>}
      {q.isPending && read.allowed && <p className="text-slate-500">Loading…</p>}
      {q.isError && (
        <p role="alert" className="text-red-800">
          Cannot load evidence: {q.error.message}
        </p>
      )}
      {q.data && events.length === 0 && <p className="text-slate-600">No evidence matches.</p>}
      {events.length > 0 && (
        // the table scrolls in its own box on a narrow screen, never the page (relative: its sr-only caption too)
        <div className="relative overflow-x-auto">
          <table className="w-full min-w-[48rem] text-left text-sm" data-testid="evidence-table">
            <caption className="sr-only">Evidence events, newest first</caption>
            <thead className="text-xs text-slate-600">
              <tr>
                {['Seq', 'Time', 'Type', 'Actor', 'App', 'Cluster / env', 'Summary'].map((h, i, all) => (
                  <th key={h} scope="col" className={i < all.length - 1 ? 'py-1 pr-2' : 'py-1'}>
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {events.map((e) => (
                <EventRows key={e.seq} e={e} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <span role="status" className="text-slate-600" data-testid="evidence-count">
          {q.data ? `${events.length} event${events.length === 1 ? '' : 's'} shown` : ''}
        </span>
        {q.hasNextPage && (
          <button
            type="button"
            onClick={() => void q.fetchNextPage()}
            disabled={q.isFetchingNextPage}
            className="rounded border border-slate-300 px-3 py-1 hover:bg-slate-50 disabled:opacity-60"
          >
            {q.isFetchingNextPage ? 'Loading older…' : 'Load older'}
          </button>
        )}
        {q.data && !q.hasNextPage && events.length > 0 && (
          <span className="text-slate-500">The oldest event is shown.</span>
        )}
      </div>
    </div>
  );
}
