import { useEffect, useState } from 'react';
import { formatLocal, formatUtc } from './time.tsx';

export function formatAgo(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

export function TimeAgo({ iso }: { iso?: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 5000);
    return () => clearInterval(t);
  }, []);
  return (
    <time dateTime={iso} title={iso ? `${formatLocal(iso)} · ${formatUtc(iso)}` : undefined}>
      {formatAgo(iso, now)}
    </time>
  );
}
