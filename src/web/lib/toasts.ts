// The toast list behind the one notification surface: a tiny external store, so that the MutationCache
// (outside React) can push and the ToastRegion can render. One store per app (and per test).

export type ToastTone = 'success' | 'error';

export interface Toast {
  id: number;
  tone: ToastTone;
  title: string;
  message?: string;
  /** the BFF's request id of a failed (5xx) request: what the user quotes to whoever reads the logs */
  requestId?: string;
}
export type ToastInput = Omit<Toast, 'id'>;

export interface ToastStore {
  subscribe: (listener: () => void) => () => void;
  getSnapshot: () => readonly Toast[];
  push: (t: ToastInput) => number;
  dismiss: (id: number) => void;
}

/** Keeps the newest `max` toasts (an error storm does not cover the page). */
export function createToastStore(max = 5): ToastStore {
  let toasts: readonly Toast[] = [];
  let nextId = 1;
  const listeners = new Set<() => void>();
  const set = (next: readonly Toast[]) => {
    toasts = next;
    for (const l of listeners) l();
  };
  return {
    subscribe: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    getSnapshot: () => toasts,
    push: (t) => {
      const id = nextId++;
      set([...toasts, { ...t, id }].slice(-max));
      return id;
    },
    dismiss: (id) => {
      if (toasts.some((t) => t.id === id)) set(toasts.filter((t) => t.id !== id));
    },
  };
}
