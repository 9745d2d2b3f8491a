// The governed controls of a canary (an Argo Rollout's or a Flagger Canary's): a required reason, one button per
// verb the canary accepts now, why not when the user's role does not reach it, and what was sent. Test ids keep the
// caller's prefix (`rollout-abort`, `flagger-promote`, …).
import { useState, type ReactNode } from 'react';

export function CanaryActions<V extends string>({
  prefix,
  verbs,
  danger,
  perm,
  pending,
  done,
  onAct,
}: {
  prefix: string;
  verbs: readonly V[];
  /** the verbs that stop a canary (shown red) */
  danger: readonly V[];
  perm: { allowed: boolean; reason?: string };
  pending: boolean;
  /** what the last action did, when it succeeded */
  done?: ReactNode;
  onAct: (verb: V, reason: string, sent: () => void) => void;
}) {
  const [reason, setReason] = useState('');
  if (!verbs.length) return null;
  const canAct = perm.allowed && reason.trim().length >= 3 && !pending;
  return (
    <div className="mt-2 flex flex-wrap items-center gap-2">
      <label className="flex items-center gap-1 text-xs">
        <span className="text-slate-600">Reason</span>
        <input
          className="w-64 rounded border border-slate-300 px-1 py-0.5"
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          data-testid={`${prefix}-reason`}
          placeholder="why (recorded with the action)"
        />
      </label>
      {verbs.map((v) => (
        <button
          key={v}
          type="button"
          data-testid={`${prefix}-${v}`}
          disabled={!canAct}
          title={!perm.allowed ? perm.reason : reason.trim().length < 3 ? 'give a reason first' : `${v} this canary`}
          onClick={() => onAct(v, reason.trim(), () => setReason(''))}
          className={`rounded border px-2 py-0.5 text-xs font-medium disabled:cursor-not-allowed disabled:border-slate-300 disabled:text-slate-400 ${danger.includes(v) ? 'border-red-700 text-red-800' : 'border-teal-700 text-teal-800'}`}
        >
          {v}
        </button>
      ))}
      {!perm.allowed && <span className="text-xs text-slate-500">{perm.reason}</span>}
      {done && (
        <span className="text-xs text-emerald-700" role="status" data-testid={`${prefix}-done`}>
          {done}
        </span>
      )}
    </div>
  );
}
