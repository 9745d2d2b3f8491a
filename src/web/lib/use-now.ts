import { useEffect, useState } from 'react';

/** The current time, refreshed every `everyMs` (for "40 s ago" texts that keep counting). */
export function useNow(everyMs = 5_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}
