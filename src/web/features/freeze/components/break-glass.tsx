// Break-glass on the freezes page (decision 0026): deploy one app through a planned window in force — asked with a
// reason and minutes by one person, approved by a second with on-call (never the one who asked), then the window
// holds the app again. The requests with their state, and Approve where the reader may.
import { useId, useState } from 'react';
import type { BreakGlassDto, FreezeWindowDto } from '../../../../api/schemas.ts';
import { Time } from '../../../components/time.tsx';
import { usePermission } from '../../../lib/use-permission.ts';
import {
  useApproveBreakGlass,
  useBreakGlassRequests,
  useFreezeWindows,
  useRequestBreakGlass,
} from '../api/window-api.ts';

const STATE_TEXT: Record<BreakGlassDto['state'], string> = {
  requested: 'waiting for a second person',
  approved: 'deploying through the window',
  ended: 'ended',
  lapsed: 'lapsed (nobody approved it)',
  failed: 'failed',
};

export function BreakGlass() {
  const windows = useFreezeWindows();
  const q = useBreakGlassRequests();
  const active = (windows.data?.windows ?? []).filter((w) => w.active && w.apps.length);
  const requests = q.data?.requests ?? [];
  if (!active.length && !requests.length) return null;
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm" aria-labelledby="breakglass-h">
      <h2 id="breakglass-h" className="font-semibold">
        Break-glass
      </h2>
      <p className="text-sm text-slate-600">
        Deploy one app through a window in force: one person asks, a second person with on-call approves; the
        window&apos;s freeze of the app ends, and the window holds it again when the minutes are up.
      </p>
      {q.isError && (
        <p role="alert" className="text-red-800">
          Cannot load the break-glass requests: {q.error.message}
        </p>
      )}
      <ul className="mt-2 divide-y divide-slate-100 text-sm" data-testid="breakglass-list">
        {requests.map((b) => (
          <Request key={b.id} b={b} />
        ))}
      </ul>
      {active.length > 0 && <Ask windows={active} />}
    </section>
  );
}

function Request({ b }: { b: BreakGlassDto }) {
  const approve = useApproveBreakGlass();
  const may = usePermission('freeze.toggle', { cluster: b.cluster, env: b.env });
  return (
    <li className="py-2" data-testid="breakglass-item" data-id={b.id} data-app={b.app} data-state={b.state}>
      <div className="flex flex-wrap items-baseline gap-2">
        <span className="font-medium wrap-anywhere">{b.app.split('/').at(-1)}</span>
        <span className="text-slate-600 wrap-anywhere">
          through {b.window} · {b.minutes} min · asked by {b.requestedBy} at <Time iso={b.requestedAt} />: {b.reason}
        </span>
        <span className="ml-auto font-medium" data-testid="breakglass-state">
          {STATE_TEXT[b.state]}
          {b.state === 'approved' && b.until && (
            <>
              {' '}
              by {b.approvedBy}, until <Time iso={b.until} />
            </>
          )}
        </span>
        {b.state === 'requested' && (
          <button
            type="button"
            className="rounded bg-amber-700 px-2 py-0.5 text-white disabled:opacity-50"
            data-testid="breakglass-approve"
            disabled={approve.isPending || !may.allowed}
            title={may.allowed ? 'Approve: end the window’s freeze of this app for its minutes' : may.reason}
            onClick={() => approve.mutate(b.id)}
          >
            Approve
          </button>
        )}
      </div>
      {b.note && <p className="text-xs text-slate-600">{b.note}</p>}
      {approve.error && (
        <p role="alert" className="text-red-800" data-testid="breakglass-approve-error">
          {approve.error.message}
        </p>
      )}
    </li>
  );
}

function Ask({ windows }: { windows: FreezeWindowDto[] }) {
  const ask = useRequestBreakGlass();
  const targets = windows.flatMap((w) => w.apps.map((app) => ({ window: w.name, app })));
  const [target, setTarget] = useState('');
  const [reason, setReason] = useState('');
  const [minutes, setMinutes] = useState('15');
  const id = useId();
  const key = (t: { window: string; app: string }) => `${t.window} ${t.app}`;
  const chosen = targets.find((t) => key(t) === target) ?? targets[0];
  const cls = 'mt-1 rounded border border-slate-300 p-1';
  return (
    <form
      className="mt-3 flex flex-wrap items-end gap-3 border-t border-slate-100 pt-3 text-sm"
      aria-label="Ask for a break-glass"
      onSubmit={(e) => {
        e.preventDefault();
        if (chosen) ask.mutate({ window: chosen.window, app: chosen.app, reason, minutes: Number(minutes) });
      }}
    >
      <div>
        <label htmlFor={`${id}-target`} className="block font-medium">
          App (window)
        </label>
        <select
          id={`${id}-target`}
          value={chosen ? key(chosen) : ''}
          onChange={(e) => setTarget(e.target.value)}
          className={cls}
          data-testid="breakglass-target"
        >
          {targets.map((t) => (
            <option key={key(t)} value={key(t)}>
              {t.app.split('/').at(-1)} ({t.window})
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-reason`} className="block font-medium">
          Why can it not wait?
        </label>
        <input
          id={`${id}-reason`}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          className={cls}
          data-testid="breakglass-reason"
        />
      </div>
      <div>
        <label htmlFor={`${id}-minutes`} className="block font-medium">
          Minutes (1–60)
        </label>
        <input
          id={`${id}-minutes`}
          type="number"
          min={1}
          max={60}
          value={minutes}
          onChange={(e) => setMinutes(e.target.value)}
          className={`${cls} w-20`}
          data-testid="breakglass-minutes"
        />
      </div>
      <button
        type="submit"
        className="rounded bg-slate-800 px-2 py-1 text-white disabled:opacity-50"
        disabled={ask.isPending || !chosen}
        data-testid="breakglass-ask"
      >
        Ask for a break-glass
      </button>
      {ask.isSuccess && (
        <p role="status" className="w-full text-slate-700">
          Asked: a second person with on-call must approve it.
        </p>
      )}
      {ask.error && (
        <p role="alert" className="w-full text-red-800">
          {ask.error.message}
        </p>
      )}
    </form>
  );
}
