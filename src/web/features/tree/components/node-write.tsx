// A tree row's write facts: its open drift (who, which field) and its last write (the newest
// managedFields entry's manager and time, not the object's age).
import type { TreeNodeDto } from '../../../../api/schemas.ts';
import { formatLocal, formatUtc } from '../../../components/time.tsx';
import { lastWriteText, nodeDriftText } from '../../../lib/drift-text.ts';
import { useNow } from '../../../lib/use-now.ts';

export function NodeDriftMark({ drift }: { drift: NonNullable<TreeNodeDto['drift']> }) {
  const text = nodeDriftText(drift);
  return (
    <span
      data-testid="node-drift"
      data-kind={drift.kind}
      title={`${text} (${drift.writes} write${drift.writes === 1 ? '' : 's'} since ${formatLocal(drift.since)})`}
      className={`truncate rounded px-1 text-xs ring-1 ring-inset ${drift.kind === 'person' ? 'bg-orange-50 text-orange-900 ring-orange-300' : 'bg-fuchsia-50 text-fuchsia-900 ring-fuchsia-300'}`}
    >
      {text}
    </span>
  );
}

export function LastWrite({ node }: { node: Pick<TreeNodeDto, 'lastManager' | 'createdAt'> }) {
  const now = useNow(15_000);
  return (
    <span
      className="ml-auto shrink-0 text-xs text-slate-500"
      data-testid="last-write"
      title={
        node.lastManager?.time
          ? `last write ${formatLocal(node.lastManager.time)} · ${formatUtc(node.lastManager.time)}`
          : undefined
      }
    >
      {lastWriteText(node, now)}
    </span>
  );
}
