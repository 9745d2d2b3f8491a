// Extend an active freeze: more minutes, with a new reason.
import { useId, useState } from 'react';
import { ApiError } from '../../../lib/api-client.ts';
import { useExtendFreeze } from '../api/freeze-mutations.ts';
import { fieldErrors } from '../lib/freeze-text.ts';
import { DURATIONS } from './freeze-form.tsx';

export function ExtendForm({ id, disabledReason }: { id: string; disabledReason?: string | undefined }) {
  const m = useExtendFreeze(id);
  const [minutes, setMinutes] = useState('60');
  const [reason, setReason] = useState('');
  const ids = { minutes: useId(), reason: useId(), err: useId(), why: useId() };
  const err = m.error;
  const fe = err instanceof ApiError && err.status === 400 ? fieldErrors(err.message) : undefined;
  const general = err ? (fe ? fe.other.join('; ') : err.message) : '';
  const disabled = !!disabledReason;
  return (
    <form
      aria-label="Extend the freeze"
      className="mt-4 rounded border border-slate-200 bg-slate-50 p-3 text-sm"
      onSubmit={(e) => {
        e.preventDefault();
        if (!disabled && !m.isPending)
          m.mutate({ minutes: Number(minutes), reason: reason.trim() }, { onSuccess: () => setReason('') });
      }}
    >
      <h2 className="font-semibold">Extend</h2>
      {disabledReason && (
        <p id={ids.why} className="text-slate-600">
          {disabledReason}
        </p>
      )}
      <div className="mt-2 flex flex-wrap items-end gap-3">
        <div>
          <label htmlFor={ids.minutes} className="block font-medium">
            By
          </label>
          <select
            id={ids.minutes}
            value={minutes}
            onChange={(e) => setMinutes(e.target.value)}
            disabled={disabled}
            aria-describedby={fe?.fields.minutes ? `${ids.err}-minutes` : undefined}
            className="mt-1 rounded border border-slate-300 p-1"
            data-testid="extend-minutes"
          >
            {DURATIONS.map((d) => (
              <option key={d.minutes} value={d.minutes}>
                {d.label}
              </option>
            ))}
          </select>
        </div>
        <div className="min-w-64 flex-1">
          <label htmlFor={ids.reason} className="block font-medium">
            Why <span className="font-normal text-slate-500">(required)</span>
          </label>
          <input
            id={ids.reason}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            disabled={disabled}
            required
            aria-invalid={fe?.fields.reason ? true : undefined}
            aria-describedby={fe?.fields.reason ? `${ids.err}-reason` : undefined}
            className="mt-1 w-full rounded border border-slate-300 p-1"
            data-testid="extend-reason"
          />
        </div>
        <button
          type="submit"
          disabled={disabled || m.isPending}
          aria-describedby={disabledReason ? ids.why : undefined}
          className="rounded border border-sky-700 px-3 py-1 font-medium text-sky-800 disabled:cursor-not-allowed disabled:border-slate-300 disabled:text-slate-400"
          data-testid="extend"
        >
          {m.isPending ? 'Extending…' : 'Extend'}
        </button>
      </div>
      {fe?.fields.minutes && (
        <p id={`${ids.err}-minutes`} className="mt-1 text-red-700">
          {fe.fields.minutes}
        </p>
      )}
      {fe?.fields.reason && (
        <p id={`${ids.err}-reason`} className="mt-1 text-red-700">
          {fe.fields.reason}
        </p>
      )}
      {(general || fe) && (
        <p role="alert" className="mt-1 text-red-800" data-testid="extend-error">
          {general || 'The extension was refused: see the fields above.'}
        </p>
      )}
      {m.isSuccess && (
        <p role="status" className="mt-1 text-emerald-800">
          Extended.
        </p>
      )}
    </form>
  );
}
