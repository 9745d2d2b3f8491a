// Planned freeze windows on the freezes page: each window with what it means now (in force until, or next), the
// form that plans one for an environment of a cluster (a start and an end, or a cron in a time zone with a
// duration), and deletion with a reason. The console starts each occurrence as ordinary freezes (decision 0024).
import { useId, useState } from 'react';
import type { FreezeWindowDto } from '../../../../api/schemas.ts';
import { Time } from '../../../components/time.tsx';
import { usePermission } from '../../../lib/use-permission.ts';
import { useDeleteWindow, useFreezeWindows, usePlanWindow } from '../api/window-api.ts';

/** An environment of a cluster a window can be planned for (the freezes page lists them). */
interface WindowEnvironment {
  cluster: string;
  env: string;
  appIds?: string[] | undefined;
}

const scopeOf = (w: FreezeWindowDto): string => {
  const s = w.scope;
  const parts = [
    s.clusters?.length ? `clusters ${s.clusters.join(', ')}` : '',
    s.envs?.length ? `environments ${s.envs.join(', ')}` : '',
    s.apps?.length ? `apps ${s.apps.map((a) => a.split('/').at(-1)).join(', ')}` : '',
    Object.keys(s.labels ?? {}).length
      ? `labels ${Object.entries(s.labels ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')}`
      : '',
  ];
  return parts.filter(Boolean).join('; ');
};

export function FreezeWindows({ environments }: { environments: WindowEnvironment[] }) {
  const q = useFreezeWindows();
  const windows = q.data?.windows ?? [];
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm" aria-labelledby="windows-h">
      <h2 id="windows-h" className="font-semibold">
        Planned freeze windows
      </h2>
      <p className="text-sm text-slate-600">
        At each window&apos;s start the console freezes the apps it covers until its end, then Git wins and the
        automation comes back exactly.
      </p>
      {q.isError && (
        <p role="alert" className="text-red-800">
          Cannot load the windows: {q.error.message}
        </p>
      )}
      {q.data && windows.length === 0 && <p className="mt-2 text-sm text-slate-600">No window is planned.</p>}
      <ul className="mt-2 divide-y divide-slate-100 text-sm" data-testid="windows">
        {windows.map((w) => (
          <WindowItem key={w.name} w={w} />
        ))}
      </ul>
      <PlanWindow environments={environments} />
    </section>
  );
}

function WindowItem({ w }: { w: FreezeWindowDto }) {
  const del = useDeleteWindow();
  const [deleting, setDeleting] = useState(false);
  const [reason, setReason] = useState('');
  const reasonId = useId();
  return (
    <li className="py-2" data-testid="window-item" data-name={w.name}>
      <div className="flex flex-wrap items-baseline gap-2">
        <span className="font-medium">{w.name}</span>
        <span className="text-slate-600 wrap-anywhere">
          {w.reason} · {scopeOf(w)}
          {w.cron ? ` · ${w.cron} (${w.timeZone ?? ''}), ${w.minutes ?? 0} min` : ''}
        </span>
        <span
          className="ml-auto"
          data-testid="window-state"
          data-state={w.active ? 'active' : w.next ? 'next' : 'over'}
        >
          {w.active ? (
            <span className="font-medium text-sky-900">
              ❄ in force until {w.active.atLeast ? 'at least ' : ''}
              <Time iso={w.active.until} />
            </span>
          ) : w.next ? (
            <span className="text-slate-600">
              next: <Time iso={w.next.from} /> – <Time iso={w.next.until} />
            </span>
          ) : (
            <span className="text-slate-500">no occurrence within 31 days</span>
          )}
        </span>
        <button
          type="button"
          className="rounded border border-slate-300 px-2 py-0.5"
          onClick={() => setDeleting((x) => !x)}
          aria-expanded={deleting}
        >
          Delete…
        </button>
      </div>
      {deleting && (
        <form
          className="mt-2 flex flex-wrap items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            del.mutate({ name: w.name, reason });
          }}
        >
          <div>
            <label htmlFor={reasonId} className="block text-sm font-medium">
              Why does it go?
            </label>
            <input
              id={reasonId}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              className="mt-1 rounded border border-slate-300 p-1"
              data-testid="window-delete-reason"
            />
          </div>
          <button type="submit" className="rounded bg-red-800 px-2 py-1 text-white" disabled={del.isPending}>
            Delete window
          </button>
          {w.active && (
            <p className="w-full text-sm text-slate-600">
              The freezes of the occurrence in force stay until they expire: end them on their pages.
            </p>
          )}
          {del.error && (
            <p role="alert" className="w-full text-red-800">
              {del.error.message}
            </p>
          )}
        </form>
      )}
    </li>
  );
}

/** `2026-12-20T10:00` (the browser's local time) as an ISO time with its zone */
const fromLocal = (v: string): string => (v ? new Date(v).toISOString() : '');

function PlanWindow({ environments }: { environments: WindowEnvironment[] }) {
  const plan = usePlanWindow();
  const [target, setTarget] = useState('');
  /** '' : every app of the environment; else one app's id */
  const [only, setOnly] = useState('');
  const [name, setName] = useState('');
  const [reason, setReason] = useState('');
  const [recurring, setRecurring] = useState(false);
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [cron, setCron] = useState('0 16 * * 5');
  const [timeZone, setTimeZone] = useState(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
  const [minutes, setMinutes] = useState('480');
  const options = environments.map((e) => `${e.cluster}/${e.env}`).sort();
  const t = target || options[0] || '';
  const [cluster = '', env = ''] = t.split('/');
  const perm = usePermission('freeze.toggle', { cluster, env });
  const appIds = environments.find((e) => e.cluster === cluster && e.env === env)?.appIds ?? [];
  const app = appIds.includes(only) ? only : '';
  const id = useId();
  const field = (label: string, key: string, input: React.ReactNode) => (
    <div>
      <label htmlFor={`${id}-${key}`} className="block font-medium">
        {label}
      </label>
      {input}
    </div>
  );
  const cls = 'mt-1 rounded border border-slate-300 p-1';
  return (
    <form
      className="mt-4 border-t border-slate-100 pt-3 text-sm"
      aria-label="Plan a freeze window"
      onSubmit={(e) => {
        e.preventDefault();
        plan.mutate({
          name,
          reason,
          scope: app ? { apps: [app] } : { clusters: [cluster], envs: [env] },
          ...(recurring
            ? { cron, timeZone, minutes: Number(minutes) }
            : { start: fromLocal(start), end: fromLocal(end) }),
        });
      }}
    >
      <h3 className="font-semibold">Plan a window</h3>
      <div className="mt-2 flex flex-wrap gap-3">
        {field(
          'Environment',
          'env',
          <select
            id={`${id}-env`}
            value={t}
            onChange={(e) => setTarget(e.target.value)}
            className={cls}
            data-testid="window-env"
          >
            {options.map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>,
        )}
        {field(
          'Covers',
          'app',
          <select
            id={`${id}-app`}
            value={app}
            onChange={(e) => setOnly(e.target.value)}
            className={cls}
            data-testid="window-app"
          >
            <option value="">every app of the environment</option>
            {appIds.map((a) => (
              <option key={a} value={a}>
                {a.split('/').at(-1)}
              </option>
            ))}
          </select>,
        )}
        {field(
          'Name',
          'name',
          <input
            id={`${id}-name`}
            value={name}
            onChange={(e) => setName(e.target.value)}
            className={cls}
            placeholder="holiday-freeze"
            data-testid="window-name"
          />,
        )}
        {field(
          'Reason',
          'reason',
          <input
            id={`${id}-reason`}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            className={cls}
            data-testid="window-reason"
          />,
        )}
        <label className="flex items-center gap-1 self-end">
          <input type="checkbox" checked={recurring} onChange={(e) => setRecurring(e.target.checked)} /> repeats
        </label>
      </div>
      <div className="mt-2 flex flex-wrap gap-3">
        {recurring ? (
          <>
            {field(
              'Cron (5 fields)',
              'cron',
              <input id={`${id}-cron`} value={cron} onChange={(e) => setCron(e.target.value)} className={cls} />,
            )}
            {field(
              'Time zone',
              'tz',
              <input id={`${id}-tz`} value={timeZone} onChange={(e) => setTimeZone(e.target.value)} className={cls} />,
            )}
            {field(
              'Minutes',
              'minutes',
              <input
                id={`${id}-minutes`}
                inputMode="numeric"
                value={minutes}
                onChange={(e) => setMinutes(e.target.value)}
                className={cls}
              />,
            )}
          </>
        ) : (
          <>
            {field(
              'Start (your time)',
              'start',
              <input
                id={`${id}-start`}
                type="datetime-local"
                step={1}
                value={start}
                onChange={(e) => setStart(e.target.value)}
                className={cls}
                data-testid="window-start"
              />,
            )}
            {field(
              'End (your time)',
              'end',
              <input
                id={`${id}-end`}
                type="datetime-local"
                step={1}
                value={end}
                onChange={(e) => setEnd(e.target.value)}
                className={cls}
                data-testid="window-end"
              />,
            )}
          </>
        )}
      </div>
      <div className="mt-3 flex flex-wrap items-center gap-3">
        <button
          type="submit"
          className="rounded bg-sky-800 px-3 py-1 font-medium text-white disabled:opacity-50"
          disabled={!perm.allowed || plan.isPending}
          data-testid="window-plan"
        >
          Plan window
        </button>
        {!perm.allowed && <span className="text-slate-600">{perm.reason}</span>}
        {plan.isSuccess && (
          <span role="status" className="text-teal-800">
            Planned: {plan.data.window.name}
          </span>
        )}
      </div>
      {plan.error && (
        <p role="alert" className="mt-2 text-red-800" data-testid="window-error">
          {plan.error.message}
        </p>
      )}
    </form>
  );
}
