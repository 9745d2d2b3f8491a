import type { TreeNodeDto } from '../../../../api/schemas.ts';

const STYLE: Record<NonNullable<TreeNodeDto['sync']>, string> = {
  Synced: 'text-emerald-700 ring-emerald-300',
  OutOfSync: 'text-amber-800 ring-amber-300 bg-amber-50',
  Missing: 'text-amber-800 ring-amber-300 bg-amber-50',
  Extraneous: 'text-fuchsia-800 ring-fuchsia-300 bg-fuchsia-50',
  Unknown: 'text-zinc-600 ring-zinc-300',
};

export function SyncTag({ sync }: { sync: NonNullable<TreeNodeDto['sync']> }) {
  return (
    <span data-testid="node-sync" className={`rounded px-1 text-xs ring-1 ring-inset ${STYLE[sync]}`}>
      {sync}
    </span>
  );
}
