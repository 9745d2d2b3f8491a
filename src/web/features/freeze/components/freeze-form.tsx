// The freeze request: a reason (required), an optional incident link (http(s)), a duration (default 2 h, at
// most 24 h). A 400 from the BFF is shown next to the field it names; any other refusal above the buttons.
import { useId, useState } from 'react';
import type { FreezeDto } from '../../../../api/schemas.ts';
import { FREEZE_DEFAULT_MINUTES, FREEZE_MAX_MINUTES } from '../../../../domain/freeze.ts';
import { ApiError } from '../../../lib/api-client.ts';
import { useCreateFreeze } from '../api/freeze-mutations.ts';
import { fieldErrors, type FreezeField } from '../lib/freeze-text.ts';

export const DURATIONS: Array<{ minutes: number; label: string }> = [
  { minutes: 30, label: '30 min' },
  { minutes: 60, label: '1 h' },
  { minutes: 120, label: '2 h' },
  { minutes: 240, label: '4 h' },
  { minutes: 480, label: '8 h' },
  { minutes: 1440, label: '24 h (the maximum)' },
];

export interface FreezeTarget {
  cluster: string;
  env?: string | undefined;
  app?: string | undefined;
}

export function FreezeForm({
  target,
  onDone,
  onCancel,
  disabledReason,
}: {
  target: FreezeTarget;
  onDone: (f: FreezeDto) => void;
  onCancel?: () => void;
  /** set: the form is shown disabled, saying why */
  disabledReason?: string | undefined;
}) {
  const m = useCreateFreeze();
  const [reason, setReason] = useState('');
  const [incident, setIncident] = useState('');
  const [duration, setDuration] = useState(String(FREEZE_DEFAULT_MINUTES));
  const [custom, setCustom] = useState('');
  const ids = {
    reason: useId(),
    incident: useId(),
    duration: useId(),
    custom: useId(),
    error: useId(),
    disabled: useId(),
  };
  const err = m.error;
  const parsed =
    err instanceof ApiError && err.status === 400 ? fieldErrors(err.message) : { fields: {}, other: [] as string[] };
  const fe = parsed.fields as Partial<Record<FreezeField, string>>;
  const general = err && !(err instanceof ApiError && err.status === 400) ? err.message : parsed.other.join('; ');
  const minutes = duration === 'custom' ? Number(custom) : Number(duration);
  const disabled = !!disabledReason || m.isPending;
  const errId = (f: FreezeField) => `${ids.error}-${f}`;
  const describe = (f: FreezeField, extra?: string) =>
    [fe[f] ? errId(f) : undefined, extra].filter(Boolean).join(' ') || undefined;
  const fieldError = (f: FreezeField) =>
    fe[f] ? (
      <p id={errId(f)} className="mt-1 text-sm text-red-700" data-testid={`freeze-error-${f}`}>
        <span aria-hidden>⚠ </span>
        {fe[f]}
      </p>
    ) : null;
  return (
    <form
      aria-label="Freeze"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (disabled) return;
        m.mutate(
          {
            cluster: target.cluster,
            ...(target.env ? { env: target.env } : {}),
            ...(target.app ? { app: target.app } : {}),
            reason: reason.trim(),
            ...(incident.trim() ? { incident: incident.trim() } : {}),
            minutes,
          },
          { onSuccess: (r) => onDone(r.freeze) },
        );
      }}
      className="grid gap-3 text-sm"
    >
      {disabledReason && (
        <p id={ids.disabled} className="text-slate-600" data-testid="freeze-disabled-reason">
          {disabledReason}
        </p>
      )}
      <div>
        <label htmlFor={ids.reason} className="block font-medium">
          Reason <span className="font-normal text-slate-500">(required)</span>
        </label>
        <textarea
          id={ids.reason}
          data-autofocus
          required
          aria-required="true"
          aria-invalid={fe.reason ? true : undefined}
          aria-describedby={describe('reason')}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          disabled={!!disabledReason}
          rows={2}
          maxLength={500}
          className="mt-1 w-full rounded border border-slate-300 p-1"
          data-testid="freeze-reason"
        />
        {fieldError('reason')}
      </div>
      <div>
        <label htmlFor={ids.incident} className="block font-medium">
          Incident link <span className="font-normal text-slate-500">(optional, http(s))</span>
        </label>
        <input
          id={ids.incident}
          type="url"
          inputMode="url"
          placeholder="https://status.example.com/incidents/42"
          aria-invalid={fe.incident ? true : undefined}
          aria-describedby={describe('incident')}
          value={incident}
          onChange={(e) => setIncident(e.target.value)}
          disabled={!!disabledReason}
          className="mt-1 w-full rounded border border-slate-300 p-1"
          data-testid="freeze-incident"
        />
        {fieldError('incident')}
      </div>
      <div className="flex flex-wrap items-end gap-3">
        <div>
          <label htmlFor={ids.duration} className="block font-medium">
            Duration
          </label>
          <select
            id={ids.duration}
            value={duration}
            onChange={(e) => setDuration(e.target.value)}
            disabled={!!disabledReason}
            aria-describedby={duration === 'custom' ? undefined : describe('minutes')}
            className="mt-1 rounded border border-slate-300 p-1"
            data-testid="freeze-duration"
          >
            {DURATIONS.map((d) => (
              <option key={d.minutes} value={d.minutes}>
                {d.label}
              </option>
            ))}
            <option value="custom">custom…</option>
          </select>
        </div>
        {duration === 'custom' && (
          <div>
            <label htmlFor={ids.custom} className="block font-medium">
              Minutes <span className="font-normal text-slate-500">(1–{FREEZE_MAX_MINUTES})</span>
            </label>
            <input
              id={ids.custom}
              type="number"
              min={1}
              max={FREEZE_MAX_MINUTES}
              step={1}
              value={custom}
              onChange={(e) => setCustom(e.target.value)}
              aria-invalid={fe.minutes ? true : undefined}
              aria-describedby={describe('minutes')}
              className="mt-1 w-28 rounded border border-slate-300 p-1"
              data-testid="freeze-minutes"
            />
          </div>
        )}
      </div>
      {fieldError('minutes')}
      {(fe.cluster || fe.env || fe.app) && (
        <p className="text-red-700" role="alert">
          {[fe.cluster, fe.env, fe.app].filter(Boolean).join('; ')}
        </p>
      )}
      {general && (
        <p role="alert" className="rounded border border-red-200 bg-red-50 p-2 text-red-800" data-testid="freeze-error">
          {general}
        </p>
      )}
      {Object.keys(fe).length > 0 && (
        <p role="alert" className="sr-only">
          The freeze was refused: {Object.values(fe).join('; ')}
        </p>
      )}
      <div className="flex gap-2">
        <button
          type="submit"
          disabled={disabled}
          aria-describedby={disabledReason ? ids.disabled : undefined}
          className="rounded bg-sky-800 px-3 py-1 font-medium text-white disabled:cursor-not-allowed disabled:bg-slate-300"
          data-testid="freeze-submit"
        >
          {m.isPending ? 'Freezing…' : target.app ? 'Freeze app' : `Freeze every app of ${target.env ?? 'the cluster'}`}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel} className="rounded border border-slate-400 px-3 py-1">
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
