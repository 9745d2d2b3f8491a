import { useQuery } from '@tanstack/react-query';
import type { HealthzResponse } from '../../../../api/schemas.ts';
import { evidenceHealthQueryOptions } from '../api/evidence-queries.ts';

type EvidenceHealth = HealthzResponse['evidence'];

const records = (n: number) => `${n} record${n === 1 ? '' : 's'}`;

/** What the banner says, or nothing while the store keeps up. */
export function evidenceBannerText({ pending, failing }: EvidenceHealth): string | undefined {
  if (failing)
    return `The evidence store is not accepting records${pending > 0 ? `: ${records(pending)} waiting` : ''}. Actions are refused until it is back; nothing is lost.`;
  if (pending > 0)
    return `The evidence store is catching up: ${records(pending)} waiting to be written; nothing is lost.`;
  return undefined;
}

/** Shown in the layout while the evidence store fails or has a backlog (from /healthz, polled). */
export function EvidenceBanner() {
  const q = useQuery(evidenceHealthQueryOptions());
  const text = q.data && evidenceBannerText(q.data);
  if (!text) return null;
  return (
    <div
      role="alert"
      data-testid="evidence-banner"
      data-failing={q.data?.failing ? 'true' : 'false'}
      className="border-b border-amber-300 bg-amber-50 px-6 py-2 text-sm text-amber-900"
    >
      {text}
    </div>
  );
}
