// "Freeze" on the app page header: opens the freeze dialog. Disabled, with the reason, without the role; a
// frozen app links to its freeze instead (the banner says who, why and how long).
import { useState } from 'react';
import { Link } from 'react-router';
import type { AppDto } from '../../../../api/schemas.ts';
import { ModalDialog } from '../../../components/modal-dialog.tsx';
import { usePermission } from '../../../lib/use-permission.ts';
import { FreezeForm } from './freeze-form.tsx';

export function FreezeButton({ app }: { app: Pick<AppDto, 'id' | 'cluster' | 'env' | 'name' | 'freeze'> }) {
  const perm = usePermission('freeze.toggle', { cluster: app.cluster, env: app.env });
  const [open, setOpen] = useState(false);
  if (app.freeze)
    return (
      <Link
        to={`/freezes/${encodeURIComponent(app.freeze.id)}`}
        className="rounded border border-sky-700 px-2 py-1 text-xs font-medium text-sky-800"
        data-testid="open-freeze"
      >
        Frozen: see the freeze
      </Link>
    );
  return (
    <>
      {!perm.allowed && (
        <span className="text-xs text-slate-500" data-testid="freeze-disabled-reason">
          {perm.reason}
        </span>
      )}
      <button
        type="button"
        data-testid="freeze"
        disabled={!perm.allowed}
        aria-haspopup="dialog"
        title={perm.allowed ? 'Pause reconciliation during an incident, with a reason and an expiry' : perm.reason}
        onClick={() => setOpen(true)}
        className="rounded border border-sky-700 px-2 py-1 text-xs font-medium text-sky-800 disabled:cursor-not-allowed disabled:border-slate-300 disabled:text-slate-400"
      >
        <span aria-hidden>❄ </span>Freeze
      </button>
      {open && (
        <ModalDialog
          title={`Freeze ${app.name}`}
          description={`The controller stops reconciling ${app.name} (${app.cluster}/${app.env}) until the freeze ends or expires; live changes made meanwhile are kept and can be written back to Git when you unfreeze.`}
          onClose={() => setOpen(false)}
          testId="freeze-dialog"
        >
          <FreezeForm
            target={{ cluster: app.cluster, app: app.id }}
            onCancel={() => setOpen(false)}
            onDone={() => setOpen(false)}
          />
        </ModalDialog>
      )}
    </>
  );
}
