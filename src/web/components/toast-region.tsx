// The one notification surface: mutation outcomes (errors from the MutationCache, a few successes).
// Successes are announced politely through a live region that is always in the page; each error is its
// own role="alert" (announced at once) and stays until dismissed. Every toast has a Dismiss button (Tab
// reaches it; Escape inside a toast dismisses it too); a success fades after a while unless hovered or focused.
import { useCallback, useEffect, useState, useSyncExternalStore, type KeyboardEvent } from 'react';
import type { Toast, ToastStore } from '../lib/toasts.ts';

const SUCCESS_MS = 8_000;

export function ToastRegion({ store }: { store: ToastStore }) {
  const toasts = useSyncExternalStore(store.subscribe, store.getSnapshot);
  const item = (t: Toast) => <ToastItem key={t.id} toast={t} store={store} />;
  return (
    <div className="pointer-events-none fixed right-4 bottom-4 z-50 flex w-96 max-w-[calc(100vw-2rem)] flex-col gap-2">
      <div role="status" aria-live="polite" className="flex flex-col gap-2">
        {toasts.filter((t) => t.tone === 'success').map(item)}
      </div>
      {toasts.filter((t) => t.tone === 'error').map(item)}
    </div>
  );
}

const TONE = {
  success: 'border-emerald-300 bg-emerald-50 text-emerald-900',
  error: 'border-red-300 bg-red-50 text-red-900',
};

function ToastItem({ toast, store }: { toast: Toast; store: ToastStore }) {
  const dismiss = useCallback(() => store.dismiss(toast.id), [store, toast.id]);
  const [hovered, setHovered] = useState(false);
  const [focused, setFocused] = useState(false);
  const fades = toast.tone === 'success' && !hovered && !focused;
  useEffect(() => {
    if (!fades) return;
    const t = setTimeout(dismiss, SUCCESS_MS);
    return () => clearTimeout(t);
  }, [fades, dismiss]);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Escape') dismiss();
  };
  return (
    <div
      role={toast.tone === 'error' ? 'alert' : undefined}
      data-testid="toast"
      data-tone={toast.tone}
      className={`pointer-events-auto flex items-start gap-3 rounded border px-3 py-2 text-sm shadow ${TONE[toast.tone]}`}
      onMouseEnter={() => setHovered(true)}
      onMouseLeave={() => setHovered(false)}
      onFocus={() => setFocused(true)}
      onBlur={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget)) setFocused(false);
      }}
      onKeyDown={onKeyDown}
    >
      <div className="min-w-0 flex-1">
        <p className="font-medium">{toast.title}</p>
        {toast.message && <p className="break-words">{toast.message}</p>}
        {toast.requestId && (
          <p className="mt-1 text-xs" data-testid="toast-request-id">
            Request id <code className="rounded bg-white/60 px-1 select-all">{toast.requestId}</code>
          </p>
        )}
      </div>
      <button
        type="button"
        onClick={dismiss}
        aria-label={`Dismiss: ${toast.title}`}
        className="rounded px-1 leading-none opacity-70 hover:opacity-100 focus-visible:opacity-100 focus-visible:outline-2"
      >
        ×
      </button>
    </div>
  );
}
