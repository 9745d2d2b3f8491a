// Colour theme: follows the system setting unless the user picks light or dark (kept in localStorage).
// The choice is a class on <html> (.light / .dark) that theme.css reads; 'system' sets neither, and the
// prefers-color-scheme media query decides. Applied before the first render (main.tsx).
import { useSyncExternalStore } from 'react';

export type ThemeChoice = 'system' | 'light' | 'dark';
export type Theme = 'light' | 'dark';

const KEY = 'console-theme';
const listeners = new Set<() => void>();
const media = () =>
  typeof window.matchMedia === 'function' ? window.matchMedia('(prefers-color-scheme: dark)') : null;

export function readThemeChoice(): ThemeChoice {
  try {
    const v = window.localStorage.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : 'system';
  } catch {
    return 'system';
  }
}

export function applyThemeChoice(choice: ThemeChoice): void {
  const root = document.documentElement;
  root.classList.toggle('light', choice === 'light');
  root.classList.toggle('dark', choice === 'dark');
  try {
    if (choice === 'system') window.localStorage.removeItem(KEY);
    else window.localStorage.setItem(KEY, choice);
  } catch {
    // storage refused (private mode): the choice lasts for this page only
  }
  for (const l of listeners) l();
}

/** The theme in effect: the user's choice, or the system's. */
export function resolvedTheme(choice: ThemeChoice = readThemeChoice()): Theme {
  if (choice !== 'system') return choice;
  return media()?.matches ? 'dark' : 'light';
}

function subscribe(cb: () => void) {
  listeners.add(cb);
  const m = media();
  m?.addEventListener('change', cb);
  return () => {
    listeners.delete(cb);
    m?.removeEventListener('change', cb);
  };
}

export const useThemeChoice = () => useSyncExternalStore(subscribe, readThemeChoice);
export const useResolvedTheme = () => useSyncExternalStore(subscribe, () => resolvedTheme());
