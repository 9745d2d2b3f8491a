// The app header's drift line: "drifted 40 s ago by kubectl-scale: spec.replicas 1 → 3", with the objects.
import type { AppDto } from '../../../../api/schemas.ts';
import { driftHeadline } from '../../../lib/drift-text.ts';
import { useNow } from '../../../lib/use-now.ts';

export function DriftSummary({ drift }: { drift: NonNullable<AppDto['drift']> }) {
  const now = useNow(5_000);
  const person = drift.kind === 'person';
  return (
    <div
      data-testid="drift-summary"
      data-kind={drift.kind}
      className={`mt-2 rounded px-2 py-1 text-sm wrap-anywhere ${person ? 'bg-orange-50 text-orange-900' : 'bg-fuchsia-50 text-fuchsia-900'}`}
    >
      <p>{driftHeadline(drift, now)}</p>
      <ul className="mt-0.5 text-xs opacity-80">
        {drift.objects.map((o) => (
          <li key={`${o.ref.kind}/${o.ref.namespace ?? ''}/${o.ref.name}`}>
            {o.ref.kind} {o.ref.namespace ? `${o.ref.namespace}/` : ''}
            {o.ref.name}: {o.fields.map((f) => f.path).join(', ')} · {o.writes} write{o.writes === 1 ? '' : 's'}
            {o.afterApplyMs !== undefined
              ? ` · ${Math.round(o.afterApplyMs / 1000)} s after the controller's apply`
              : ''}
          </li>
        ))}
      </ul>
    </div>
  );
}
