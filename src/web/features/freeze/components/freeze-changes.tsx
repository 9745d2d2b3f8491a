// The live changes made since the freeze began (polled while it is active), each with its decision for the
// unfreeze: write it back to Git (default) or let Git win. An app whose diff failed is "changes unknown",
// never "no changes". Unfreezing warns first what the controller will revert.
import { useId, useState } from 'react';
import type { FreezeDto, LiveChangeDto } from '../../../../api/schemas.ts';
import { ModalDialog } from '../../../components/modal-dialog.tsx';
import { Time } from '../../../components/time.tsx';
import { useEndFreeze, type FreezeDecision } from '../api/freeze-mutations.ts';
import { useFreezeChanges } from '../api/freeze-queries.ts';
import { appNameOf, objectText, valueText } from '../lib/freeze-text.ts';

type Action = FreezeDecision['action'];

export function FreezeChanges({ freeze, disabledReason }: { freeze: FreezeDto; disabledReason?: string | undefined }) {
  const q = useFreezeChanges(freeze.id, freeze.active);
  const end = useEndFreeze(freeze.id);
  const [chosen, setChosen] = useState<Record<string, Action>>({});
  const [confirming, setConfirming] = useState(false);
  const whyId = useId();
  const changes = q.data?.changes ?? [];
  const unknown = q.data?.unknown ?? [];
  const actionOf = (c: LiveChangeDto): Action => chosen[c.id] ?? 'write-back';
  const decisions: FreezeDecision[] = changes.map((c) => ({ change: c.id, action: actionOf(c) }));
  const writeBacks = decisions.filter((d) => d.action === 'write-back').length;
  const gitWins = decisions.length - writeBacks;
  const canUnfreeze = freeze.canEnd && !disabledReason && !end.isPending && !q.isPending;
  return (
    <section className="mt-4" aria-labelledby="freeze-changes-h">
      <h2 id="freeze-changes-h" className="font-semibold">
        Live changes since the freeze began
      </h2>
      <p className="text-xs text-slate-600">
        Fields whose manager is not the GitOps controller, written after <Time iso={freeze.startedAt} />; read again
        every 5 s.
      </p>
      {q.isPending && <p className="text-sm text-slate-500">Loading the live changes…</p>}
      {q.isError && (
        <p role="alert" className="mt-1 text-sm text-red-800" data-testid="freeze-changes-error">
          Changes unknown: {q.error.message}
        </p>
      )}
      {unknown.length > 0 && (
        <ul className="mt-2 space-y-1 text-sm wrap-anywhere" data-testid="freeze-unknown">
          {unknown.map((u) => (
            <li key={u.appId} role="alert" className="rounded border border-amber-300 bg-amber-50 p-2 text-amber-950">
              <span aria-hidden>⚠ </span>
              Changes unknown for {appNameOf(u.appId)}: {u.reason}
            </li>
          ))}
        </ul>
      )}
      {q.data && changes.length === 0 && (
        <p className="mt-1 text-sm text-slate-600" data-testid="freeze-no-changes">
          {unknown.length
            ? 'No live change found in the other apps.'
            : 'No live change since the freeze began: nothing to write back.'}
        </p>
      )}
      {changes.length > 0 && (
        // relative: the radio buttons' sr-only legends (position: absolute) stay inside the scroll box
        <div className="relative mt-2 overflow-x-auto">
          <table className="w-full min-w-[48rem] text-sm" data-testid="freeze-changes">
            <caption className="sr-only">Live changes and what the unfreeze does with each</caption>
            <thead>
              <tr className="text-left text-slate-600 [&>th]:pr-3 [&>th]:pb-1 [&>th]:font-medium">
                <th scope="col">Object</th>
                <th scope="col">Field</th>
                <th scope="col">Git → live</th>
                <th scope="col">By</th>
                <th scope="col">When</th>
                <th scope="col">At unfreeze</th>
              </tr>
            </thead>
            <tbody>
              {changes.map((c) => (
                <ChangeRow
                  key={c.id}
                  change={c}
                  action={actionOf(c)}
                  disabled={!canUnfreeze}
                  onChange={(a) => setChosen((s) => ({ ...s, [c.id]: a }))}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {freeze.active && (
        <div className="mt-3 flex flex-wrap items-center gap-2">
          <button
            type="button"
            disabled={!canUnfreeze}
            aria-haspopup="dialog"
            aria-describedby={disabledReason ? whyId : undefined}
            onClick={() => setConfirming(true)}
            className="rounded bg-sky-800 px-3 py-1 text-sm font-medium text-white disabled:cursor-not-allowed disabled:bg-slate-300"
            data-testid="unfreeze"
          >
            Unfreeze…
          </button>
          {disabledReason && (
            <span id={whyId} className="text-sm text-slate-600" data-testid="unfreeze-disabled-reason">
              {disabledReason}
            </span>
          )}
        </div>
      )}
      {end.isError && !confirming && (
        <p role="alert" className="mt-2 rounded border border-red-200 bg-red-50 p-2 text-sm text-red-800">
          Not unfrozen: {end.error.message}
        </p>
      )}
      {confirming && (
        <ModalDialog
          title="Unfreeze?"
          role="alertdialog"
          onClose={() => setConfirming(false)}
          testId="unfreeze-dialog"
          description="The prior automation is restored: the controller reconciles from Git again."
        >
          <ul className="list-disc space-y-1 pl-5 text-sm" data-testid="unfreeze-warning">
            {gitWins > 0 && (
              <li>
                <strong>
                  {gitWins} change{gitWins === 1 ? '' : 's'} will be reverted
                </strong>{' '}
                by the controller (“let Git win”).
              </li>
            )}
            {writeBacks > 0 && (
              <li>
                {writeBacks} change{writeBacks === 1 ? ' is' : 's are'} written to a new branch in Git; until that
                branch is merged <strong>the controller reverts {writeBacks === 1 ? 'it' : 'them'} too</strong>.
              </li>
            )}
            {decisions.length === 0 && <li>No live change is listed: nothing is written back.</li>}
            {(unknown.length > 0 || q.isError) && (
              <li className="text-amber-900">
                The changes of {unknown.length ? unknown.map((u) => appNameOf(u.appId)).join(', ') : 'this freeze'} are
                unknown: whatever was changed there will be reverted and is not written back.
              </li>
            )}
          </ul>
          {end.isError && (
            <p role="alert" className="mt-2 rounded border border-red-200 bg-red-50 p-2 text-sm text-red-800">
              Not unfrozen: {end.error.message}
            </p>
          )}
          <div className="mt-3 flex gap-2">
            <button
              type="button"
              data-autofocus
              disabled={end.isPending}
              onClick={() => end.mutate(decisions, { onSuccess: () => setConfirming(false) })}
              className="rounded bg-sky-800 px-3 py-1 text-sm font-medium text-white disabled:bg-slate-300"
              data-testid="unfreeze-confirm"
            >
              {end.isPending ? 'Unfreezing…' : 'Unfreeze now'}
            </button>
            <button
              type="button"
              onClick={() => setConfirming(false)}
              className="rounded border border-slate-400 px-3 py-1 text-sm"
            >
              Cancel
            </button>
          </div>
        </ModalDialog>
      )}
    </section>
  );
}

function ChangeRow({
  change: c,
  action,
  disabled,
  onChange,
}: {
  change: LiveChangeDto;
  action: Action;
  disabled: boolean;
  onChange: (a: Action) => void;
}) {
  const name = useId();
  const object = objectText(c.ref);
  return (
    <tr
      className="border-t border-slate-100 align-top"
      data-testid="freeze-change"
      data-path={c.path}
      data-name={c.ref.name}
    >
      <td className="pr-3 wrap-anywhere">{object}</td>
      <td className="pr-3 font-mono wrap-anywhere">{c.path}</td>
      <td className="pr-3 font-mono wrap-anywhere" data-testid="freeze-change-values">
        {valueText(c.git)} → {valueText(c.live)}
      </td>
      <td className="pr-3 wrap-anywhere">
        <span
          className="rounded bg-orange-100 px-1.5 py-0.5 text-xs font-medium text-orange-900 ring-1 ring-orange-300 ring-inset"
          title={`operation ${c.operation}`}
          data-testid="freeze-change-manager"
        >
          {c.manager}
        </span>
      </td>
      <td className="pr-3 whitespace-nowrap">
        <Time iso={c.time} timeOnly />
      </td>
      <td>
        <fieldset className="flex flex-col gap-0.5" disabled={disabled}>
          <legend className="sr-only">
            At unfreeze, {object} {c.path}
          </legend>
          <label className="flex items-center gap-1">
            <input
              type="radio"
              name={name}
              value="write-back"
              checked={action === 'write-back'}
              onChange={() => onChange('write-back')}
              data-testid="decision-write-back"
            />
            Write back to Git
          </label>
          <label className="flex items-center gap-1">
            <input
              type="radio"
              name={name}
              value="git-wins"
              checked={action === 'git-wins'}
              onChange={() => onChange('git-wins')}
              data-testid="decision-git-wins"
            />
            Let Git win
          </label>
        </fieldset>
      </td>
    </tr>
  );
}
