// Focus across page changes: a new page starts reading at its content (focus on <main>); Back (or
// Forward) puts focus on what had it when the page was left (the app card that was opened), once the
// page has rendered it again (within RESTORE_WAIT_MS). Changes within a page (filters, selection, the
// drawer) leave focus alone.
import { useEffect, useRef, type RefObject } from 'react';
import { useLocation, useNavigationType } from 'react-router';

/** A selector that finds the element again in a fresh render of the same page. */
export function selectorFor(el: Element, root: Element): string | null {
  if (el === root) return null;
  const appId = el.getAttribute('data-app-id');
  if (appId) return `[data-app-id="${CSS.escape(appId)}"]`;
  if (el.id) return `#${CSS.escape(el.id)}`;
  const steps: string[] = [];
  for (let e: Element | null = el; e && e !== root; e = e.parentElement) {
    const tag = e.tagName.toLowerCase();
    const same = e.parentElement ? [...e.parentElement.children].filter((c) => c.tagName === e?.tagName) : [e];
    steps.unshift(`${tag}:nth-of-type(${same.indexOf(e) + 1})`);
  }
  return `:scope > ${steps.join(' > ')}`;
}

/**
 * How long Back waits for the page to render again what had focus: its data comes from the BFF, which a busy
 * console answers in seconds (the old two seconds of animation frames ran out under load, and focus stayed on
 * <main>). Meanwhile focus is on <main>; a user who moves it ends the wait.
 */
export const RESTORE_WAIT_MS = 10_000;

export function useFocusRestore(main: RefObject<HTMLElement | null>): void {
  const location = useLocation();
  const navType = useNavigationType();
  const lastFocus = useRef<string | null>(null);
  const saved = useRef(new Map<string, string>());
  const prev = useRef<{ key: string; path: string } | null>(null);

  useEffect(() => {
    const onFocusIn = (e: FocusEvent) => {
      const root = main.current;
      if (root && e.target instanceof Element && root.contains(e.target))
        lastFocus.current = selectorFor(e.target, root);
    };
    document.addEventListener('focusin', onFocusIn);
    return () => document.removeEventListener('focusin', onFocusIn);
  }, [main]);

  useEffect(() => {
    const before = prev.current;
    prev.current = { key: location.key, path: location.pathname };
    if (!before || before.path === location.pathname) return;
    if (lastFocus.current) saved.current.set(before.key, lastFocus.current);
    lastFocus.current = null;
    const target = navType === 'POP' ? saved.current.get(location.key) : undefined;
    const root = main.current;
    const find = () => (target && root ? root.querySelector<HTMLElement>(target) : null);
    const now = find();
    if (now) {
      now.focus();
      return;
    }
    root?.focus({ preventScroll: true });
    if (!target || !root) return;
    // not rendered yet (its data is on the way): focus it when it appears, unless the user moved focus meanwhile
    const observer = new MutationObserver(() => {
      const el = find();
      if (!el) return;
      stop();
      el.focus();
    });
    const onMoved = (e: FocusEvent) => {
      if (e.target !== root) stop();
    };
    const timer = setTimeout(() => stop(), RESTORE_WAIT_MS);
    function stop() {
      observer.disconnect();
      clearTimeout(timer);
      document.removeEventListener('focusin', onMoved);
    }
    observer.observe(root, { childList: true, subtree: true });
    document.addEventListener('focusin', onMoved);
    return stop;
  }, [location.key, location.pathname, navType, main]);
}
