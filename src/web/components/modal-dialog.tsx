// A modal dialog on the native <dialog> (the rest of the page is inert), as the tree's details drawer does:
// it takes focus (its first field, or itself), keeps Tab inside, closes on Escape, and gives focus back to
// what opened it.
import { useEffect, useId, useRef, type KeyboardEvent, type ReactNode } from 'react';

const TABBABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

export function ModalDialog({
  title,
  description,
  onClose,
  children,
  testId,
  role,
}: {
  title: string;
  description?: ReactNode;
  onClose: () => void;
  children: ReactNode;
  testId?: string;
  /** 'alertdialog' for a confirmation that warns */
  role?: 'alertdialog';
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descId = useId();
  useEffect(() => {
    const d = dialog.current;
    const a = document.activeElement;
    const opener = a instanceof HTMLElement ? a : null;
    if (d && !d.open) {
      if (typeof d.showModal === 'function') d.showModal();
      else d.setAttribute('open', '');
    }
    const first = d?.querySelector<HTMLElement>('[data-autofocus]') ?? d;
    first?.focus();
    return () => {
      if (opener?.isConnected) opener.focus({ preventScroll: true });
    };
  }, []);
  const onKeyDown = (e: KeyboardEvent<HTMLDialogElement>) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      onClose();
      return;
    }
    if (e.key !== 'Tab' || !dialog.current) return;
    const all = [...dialog.current.querySelectorAll<HTMLElement>(TABBABLE)];
    const first = all[0];
    const last = all.at(-1);
    if (!first || !last) return;
    const at = document.activeElement;
    if (e.shiftKey && (at === first || at === dialog.current)) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && at === last) {
      e.preventDefault();
      first.focus();
    }
  };
  return (
    <dialog
      ref={dialog}
      role={role}
      aria-modal="true"
      aria-labelledby={titleId}
      aria-describedby={description ? descId : undefined}
      tabIndex={-1}
      data-testid={testId}
      onKeyDown={onKeyDown}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      className="m-auto w-[34rem] max-w-[calc(100%-2rem)] rounded-lg border border-slate-200 bg-white p-0 text-slate-900 shadow-xl outline-none backdrop:bg-black/30"
    >
      <header className="flex items-start gap-2 border-b border-slate-200 p-3">
        <div className="min-w-0">
          <h2 id={titleId} className="font-semibold">
            {title}
          </h2>
          {description && (
            <div id={descId} className="text-sm text-slate-600">
              {description}
            </div>
          )}
        </div>
        <button type="button" className="ml-auto rounded px-2 text-lg" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </header>
      <div className="p-3">{children}</div>
    </dialog>
  );
}
