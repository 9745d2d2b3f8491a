import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useMemo, useState } from 'react';
import type { FieldChangeDto, ObjectDiffDto } from '../../../../api/schemas.ts';
import { hiddenEnvLine } from '../../../../domain/env-visibility.ts';
import { HookTag } from '../../../components/hook-tag.tsx';
import { diffQueryOptions } from '../api/diff-queries.ts';
import { OwnershipMap } from './ownership-map.tsx';
import { PlaintextSecretsBanner, SecretInGit } from './secret-in-git.tsx';
import { fixSnippet, lineBadges, ownerBadge, ownerHover, visibleChanges, type DiffToggles } from '../lib/diff-view.ts';

const MonacoDiff = lazy(() => import('../../../components/editor/monaco-diff.tsx'));

const CLASS_STYLE: Record<FieldChangeDto['class'], string> = {
  drift: 'bg-amber-100 text-amber-900',
  pending: 'bg-sky-100 text-sky-900',
  conflict: 'bg-red-100 text-red-900',
  defaulted: 'bg-slate-100 text-slate-600',
  ignored: 'bg-slate-100 text-slate-500',
  // a progressive-delivery controller's own field (Argo Rollouts, Flagger): expected, not to fix
  delivery: 'bg-emerald-100 text-emerald-900',
};
const show = (v: unknown) => (v === undefined ? '∅' : typeof v === 'string' ? v : JSON.stringify(v));

/**
 * The empty-render banner in one sentence (issue 39: it said "the render is empty" twice): the plan's reasons
 * without their own "the render is empty:" lead, and the override once.
 */
export function emptyRenderText(reasons: string[]): string {
  const rest = reasons
    .map((r) =>
      r.replace(/^the render is empty:\s*/i, '').replace(/[;.]?\s*a prune preview would need an override\.?$/i, ''),
    )
    .filter(Boolean);
  return `The render is empty: every object this app tracks is extraneous${rest.length ? ` — ${rest.join('; ')}` : ''}. A prune preview would need an override.`;
}

export function AppDiff({ appId, controller }: { appId: string; controller: 'flux' | 'argocd' }) {
  const q = useQuery(diffQueryOptions(appId));
  const [t, setT] = useState<DiffToggles>({ hideDefaulted: true, hideIgnored: true, onlyDrift: false });
  const [showUnchanged, setShowUnchanged] = useState(false);
  const objects = useMemo(
    () =>
      (q.data?.objects ?? []).filter(
        (o) => showUnchanged || o.status !== 'unchanged' || o.changes.some((c) => c.class === 'conflict'),
      ),
    [q.data, showUnchanged],
  );
  return (
    <section className="mt-4 rounded-lg border border-slate-200 bg-white p-4" data-testid="app-diff">
      <div className="mb-2 flex flex-wrap items-center gap-3">
        <h2 className="font-semibold">Git versus live</h2>
        {q.data && (
          <span className="text-sm" data-testid="diff-summary">
            {q.data.summary}
          </span>
        )}
        <button
          className="ml-auto rounded border border-slate-300 px-2 py-0.5 text-sm"
          onClick={() => void q.refetch()}
        >
          {q.isFetching ? 'comparing…' : 'refresh'}
        </button>
      </div>
      {q.isPending && <p className="text-sm text-slate-500">Rendering Git and comparing with the cluster…</p>}
      {q.isError && <p className="text-sm text-red-700">Cannot compare: {q.error.message}</p>}
      {q.data?.state === 'unknown' && (
        <p role="alert" className="rounded bg-amber-50 p-2 text-sm text-amber-900" data-testid="diff-unknown">
          Desired state unknown: {q.data.error}. Nothing is compared and nothing would be pruned.
        </p>
      )}
      {q.data?.state === 'ok' && q.data.emptyRender && (
        <p role="alert" className="mb-2 rounded bg-red-50 p-2 text-sm text-red-900" data-testid="diff-empty-render">
          {emptyRenderText(q.data.prune?.reasons ?? [])}
        </p>
      )}
      {q.data?.state === 'ok' && <PlaintextSecretsBanner render={q.data.render} />}
      {q.data?.render && (
        <p className="mb-2 font-mono text-xs text-slate-500" data-testid="render-info">
          {q.data.render.renderer} · {q.data.render.revision} · artifact {q.data.render.artifactDigest ?? '—'} · render{' '}
          {q.data.render.renderHash.slice(0, 19)}…
        </p>
      )}
      {q.data?.state === 'ok' && (
        <div className="mb-2 flex flex-wrap gap-3 text-sm">
          {(['hideDefaulted', 'hideIgnored', 'onlyDrift'] as const).map((k) => (
            <label key={k} className="flex items-center gap-1">
              <input type="checkbox" checked={t[k]} onChange={(e) => setT({ ...t, [k]: e.target.checked })} />
              {k === 'hideDefaulted' ? 'hide defaulted' : k === 'hideIgnored' ? 'hide ignored' : 'only drift'}
            </label>
          ))}
          <label className="flex items-center gap-1">
            <input type="checkbox" checked={showUnchanged} onChange={(e) => setShowUnchanged(e.target.checked)} /> show
            unchanged objects
          </label>
          <span className="ml-auto text-slate-500">
            {Object.entries(q.data.counts)
              .map(([k, v]) => `${v} ${k}`)
              .join(' · ')}
          </span>
        </div>
      )}
      {q.data?.hiddenByEnvironment ? (
        <p className="mb-2 rounded bg-slate-50 p-2 text-sm text-slate-700" role="status" data-testid="diff-hidden-envs">
          {hiddenEnvLine(q.data.hiddenByEnvironment)}
        </p>
      ) : null}
      {objects.map((o) => (
        <ObjectDiffView
          key={`${o.ref.kind}/${o.ref.namespace}/${o.ref.name}`}
          o={o}
          toggles={t}
          controller={controller}
        />
      ))}
      {q.data?.state === 'ok' && <OwnershipMap rows={q.data.ownership} controller={controller} />}
    </section>
  );
}

function ObjectDiffView({
  o,
  toggles,
  controller,
}: {
  o: ObjectDiffDto;
  toggles: DiffToggles;
  controller: 'flux' | 'argocd';
}) {
  const [open, setOpen] = useState(false);
  const changes = visibleChanges(o.changes, toggles);
  const badges = useMemo(() => lineBadges(o, changes), [o, changes]);
  return (
    <div
      className="mb-3 rounded border border-slate-200"
      data-testid="object-diff"
      data-kind={o.ref.kind}
      data-name={o.ref.name}
      data-status={o.status}
    >
      <div className="flex flex-wrap items-center gap-x-2 bg-slate-50 px-2 py-1 text-sm">
        <span className="min-w-0 wrap-anywhere">
          <strong>{o.ref.kind}</strong> {o.ref.namespace ? `${o.ref.namespace}/` : ''}
          {o.ref.name}
        </span>
        {o.hook ? (
          // an Argo CD hook: not compared (Argo CD compares none of it), so neither "unchanged" nor a drift
          <HookTag hook={o.hook} />
        ) : (
          <span className="rounded bg-white px-1 text-xs ring-1 ring-slate-300">{o.status}</span>
        )}
        {o.mode === 'normalized' && (
          <span className="rounded bg-amber-50 px-1 text-xs text-amber-900 ring-1 ring-amber-300">
            normalized comparison (no dry-run)
          </span>
        )}
        {o.mode === 'apply-noop' && (
          <span
            className="rounded bg-white px-1 text-xs text-slate-600 ring-1 ring-slate-300"
            title="Every field Git sets has that value live, nobody else wrote the object, and the controller owns no field Git dropped (its managedFields): applying Git changes nothing, so the apiserver was not asked for a dry-run. Admission webhooks or policies added since the last apply are not re-checked (a dry-run would; CONSOLE_DIFF_PROOF=off)"
          >
            apply changes nothing (from managedFields)
          </span>
        )}
        {o.note && <span className="min-w-0 text-xs text-slate-500 wrap-anywhere">{o.note}</span>}
        {(o.liveYaml || o.predictedYaml) && (
          <button className="ml-auto text-xs text-teal-700 underline" onClick={() => setOpen(!open)}>
            {open ? 'hide side-by-side' : 'side-by-side'}
          </button>
        )}
      </div>
      {o.secret && <SecretInGit secret={o.secret} />}
      {changes.length > 0 && (
        <table className="w-full text-xs" data-testid="field-table">
          <thead>
            <tr className="text-left text-slate-500">
              <th className="px-2">Field</th>
              <th>Git</th>
              <th>Live</th>
              <th>Owner</th>
              <th>Class</th>
            </tr>
          </thead>
          <tbody>
            {changes.map((c) => (
              <tr
                key={c.path}
                className="border-t border-slate-100 align-top"
                data-testid="field-row"
                data-path={c.path}
                data-class={c.class}
              >
                <td className="px-2 font-mono wrap-anywhere">{c.path}</td>
                <td className="font-mono wrap-anywhere">{show(c.predicted ?? c.desired)}</td>
                <td className="font-mono wrap-anywhere">{show(c.live)}</td>
                <td className="wrap-anywhere">
                  <span
                    className="rounded bg-violet-100 px-1 text-violet-900"
                    title={ownerHover(c)}
                    data-testid="owner-badge"
                  >
                    {ownerBadge(c)}
                  </span>
                </td>
                <td>
                  <span className={`rounded px-1 ${CLASS_STYLE[c.class]}`}>{c.class}</span>
                  {c.class === 'conflict' && (
                    <details className="mt-1">
                      <summary className="cursor-pointer text-teal-700">suggested fix</summary>
                      <pre
                        className="rounded bg-slate-50 p-1 whitespace-pre-wrap wrap-anywhere"
                        data-testid="fix-snippet"
                      >
                        {fixSnippet(controller, o, c)}
                      </pre>
                    </details>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && (
        <Suspense fallback={<p className="p-2 text-xs text-slate-500">Loading editor…</p>}>
          <div className="grid grid-cols-2 px-2 pt-1 text-xs text-slate-500">
            <span>
              {o.mode === 'apply-noop'
                ? 'Git applied (changes nothing: the same as live)'
                : 'Git (server-side dry-run of the render)'}
            </span>
            <span>Live</span>
          </div>
          <MonacoDiff original={o.predictedYaml ?? o.desiredYaml ?? ''} modified={o.liveYaml ?? ''} badges={badges} />
        </Suspense>
      )}
    </div>
  );
}
