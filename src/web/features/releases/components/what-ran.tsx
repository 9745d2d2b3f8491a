// "What ran at <time>?" (issue 28): the release live at a moment, the exact objects it rendered (stored by
// render hash, masked as everywhere; the hash in the evidence chain proves them), and a comparison with the
// release before it, field by field.
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { CompareResponse } from '../../../../api/schemas.ts';
import { Time } from '../../../components/time.tsx';
import { compareQueryOptions, manifestsQueryOptions, releaseAtQueryOptions } from '../api/manifest-queries.ts';

/** "2026-12-02T14:05:00" in the browser's zone (what a datetime-local input holds) */
function localInput(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

type Ref = { kind: string; namespace?: string | undefined; name: string };
const refText = (r: Ref) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
const valueText = (v: unknown) => (v === undefined ? '(absent)' : typeof v === 'string' ? v : JSON.stringify(v));

function Comparison({ c }: { c: CompareResponse }) {
  return (
    <div className="mt-2 space-y-2 text-sm" data-testid="release-compare">
      <p className="text-slate-700">
        {c.from.sha.slice(0, 7)} → {c.to.sha.slice(0, 7)}: {c.changed.length} changed, {c.added.length} added,{' '}
        {c.removed.length} removed, {c.unchanged} unchanged.
      </p>
      {c.changed.map((o) => (
        <div key={refText(o)} data-testid="compare-object" data-kind={o.kind} data-name={o.name}>
          <h4 className="font-mono text-xs font-semibold wrap-anywhere">{refText(o)}</h4>
          <table className="mt-1 w-full table-fixed border-collapse text-xs">
            <thead>
              <tr className="text-left text-slate-600">
                <th className="w-2/5 p-1">field</th>
                <th className="p-1">before ({c.from.sha.slice(0, 7)})</th>
                <th className="p-1">after ({c.to.sha.slice(0, 7)})</th>
              </tr>
            </thead>
            <tbody>
              {o.fields.map((f) => (
                <tr key={f.path} className="border-t border-slate-100 align-top" data-testid="compare-field">
                  <td className="p-1 font-mono wrap-anywhere">{f.path}</td>
                  <td className="bg-red-50 p-1 font-mono text-red-900 wrap-anywhere">{valueText(f.from)}</td>
                  <td className="bg-emerald-50 p-1 font-mono text-emerald-900 wrap-anywhere">{valueText(f.to)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
      {(c.added.length > 0 || c.removed.length > 0) && (
        <ul className="font-mono text-xs">
          {c.added.map((r) => (
            <li key={`+${refText(r)}`} className="text-emerald-900 wrap-anywhere">
              + {refText(r)}
            </li>
          ))}
          {c.removed.map((r) => (
            <li key={`-${refText(r)}`} className="text-red-900 wrap-anywhere">
              − {refText(r)}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function WhatRan({ appId, env }: { appId: string; env: string }) {
  const [input, setInput] = useState(() => localInput(new Date()));
  const [asked, setAsked] = useState<string>();
  const [compare, setCompare] = useState(false);
  const at = useQuery({ ...releaseAtQueryOptions(appId, asked ?? ''), enabled: !!asked });
  const rel = at.data?.release;
  const prev = at.data?.previous;
  const m = useQuery({ ...manifestsQueryOptions(appId, rel?.sha ?? ''), enabled: !!rel });
  const cmp = useQuery({
    ...compareQueryOptions(appId, prev?.sha ?? '', rel?.sha ?? ''),
    enabled: compare && !!rel && !!prev,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const d = new Date(input);
    if (Number.isNaN(d.getTime())) return;
    setCompare(false);
    setAsked(d.toISOString());
  };
  return (
    <div className="mb-3 rounded border border-slate-200 p-3" data-testid="what-ran">
      <form className="flex flex-wrap items-end gap-2 text-sm" onSubmit={submit}>
        <label className="flex flex-col">
          <span className="text-slate-700">What ran in {env} at</span>
          <input
            type="datetime-local"
            step={1}
            required
            value={input}
            onChange={(e) => setInput(e.target.value)}
            className="rounded border border-slate-300 px-2 py-1"
          />
        </label>
        <button type="submit" className="rounded bg-teal-700 px-3 py-1 text-white">
          Show
        </button>
      </form>
      {at.isError && (
        <p className="mt-2 text-sm text-red-800" role="alert">
          Cannot tell what ran then: {at.error.message}
        </p>
      )}
      {at.data && !rel && (
        <p className="mt-2 text-sm text-slate-600" data-testid="what-ran-none">
          No release of this app was applied before <Time iso={at.data.time} />, as far as the evidence reaches.
        </p>
      )}
      {rel && (
        <div className="mt-2 text-sm" data-testid="what-ran-release" data-sha={rel.sha}>
          <p>
            At <Time iso={at.data?.time ?? ''} />: release{' '}
            <span className="font-mono font-semibold">{rel.sha.slice(0, 7)}</span>, applied <Time iso={rel.appliedAt} />
            .
          </p>
          {m.isPending && <p className="text-slate-500">Loading its objects…</p>}
          {m.isError && (
            <p className="text-red-800" role="alert">
              Its objects cannot be shown: {m.error.message}
            </p>
          )}
          {m.data?.hidden && (
            <p className="mt-1 text-xs text-amber-900" role="status" data-testid="what-ran-hidden">
              {m.data.hidden.reasons.join('; ')}
            </p>
          )}
          {m.data && (
            <details className="mt-1" data-testid="what-ran-objects">
              <summary className="cursor-pointer">
                {m.data.objects.length} objects as rendered (render hash{' '}
                <span className="font-mono text-xs wrap-anywhere">{m.data.renderHash}</span>, kept{' '}
                {(m.data.storedBytes / 1024).toFixed(1)} KB compressed)
              </summary>
              <ul className="mt-1 space-y-1">
                {m.data.objects.map((o, i) => {
                  const md = (o.metadata ?? {}) as { namespace?: string; name?: string };
                  const ref = { kind: String(o.kind ?? ''), namespace: md.namespace, name: String(md.name ?? '') };
                  return (
                    <li key={i}>
                      <details>
                        <summary className="cursor-pointer font-mono text-xs wrap-anywhere">{refText(ref)}</summary>
                        <pre className="mt-1 max-h-80 overflow-auto rounded bg-slate-50 p-2 text-xs">
                          {JSON.stringify(o, null, 2)}
                        </pre>
                      </details>
                    </li>
                  );
                })}
              </ul>
            </details>
          )}
          {prev ? (
            <button
              type="button"
              className="mt-2 rounded border border-slate-300 px-2 py-1 text-sm"
              onClick={() => setCompare(true)}
              disabled={compare}
            >
              Compare with the release before ({prev.sha.slice(0, 7)}, applied <Time iso={prev.appliedAt} />)
            </button>
          ) : (
            <p className="mt-1 text-slate-600">No earlier release of this app is recorded.</p>
          )}
          {cmp.isPending && compare && <p className="text-slate-500">Comparing…</p>}
          {cmp.isError && (
            <p className="text-red-800" role="alert">
              Cannot compare: {cmp.error.message}
            </p>
          )}
          {cmp.data && <Comparison c={cmp.data} />}
        </div>
      )}
    </div>
  );
}
