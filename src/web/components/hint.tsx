import { useId, type ReactNode } from 'react';

/**
 * Something with a short explanation that a mouse user sees on hover: the same text shows on keyboard
 * focus (the element is a Tab stop) and is its accessible description, so it never needs a mouse.
 * Not for interactive children (a link or button says its own description with aria-describedby).
 */
export function Hint({ hint, children, className = '' }: { hint: string; children: ReactNode; className?: string }) {
  const id = useId();
  return (
    <span
      tabIndex={0}
      aria-describedby={id}
      className={`group relative inline-flex rounded outline-none focus-visible:ring-2 focus-visible:ring-teal-600 ${className}`}
    >
      {children}
      <span
        id={id}
        role="tooltip"
        className="absolute top-full left-0 z-30 mt-1 hidden w-max max-w-xs rounded bg-slate-800 px-2 py-1 text-xs font-normal whitespace-normal text-white shadow wrap-anywhere group-hover:block group-focus-visible:block"
      >
        {hint}
      </span>
    </span>
  );
}
