// An Argo CD hook where the tree and the diff would give a sync verdict (issue 40 item 13): "hook · PreSync ·
// Succeeded 3 min ago", with the message when it failed. Argo CD compares none of a hook: it runs it.
import type { TreeNodeDto } from '../../api/schemas.ts';
import { hookText } from '../../domain/argo-hooks.ts';
import { agoText } from '../lib/drift-text.ts';
import { useNow } from '../lib/use-now.ts';
import { formatLocal, formatUtc } from './time.tsx';

export type HookRunDto = NonNullable<TreeNodeDto['hook']>;

const FAILED = new Set(['Failed', 'Error']);

export function HookTag({ hook }: { hook: HookRunDto }) {
  const now = useNow(15_000);
  const text = hookText(hook, hook.finishedAt ? agoText(hook.finishedAt, now) : undefined);
  const failed = FAILED.has(hook.phase ?? '');
  const title = [
    `Argo CD ${hook.type} hook: Argo CD runs it at its sync phase and compares none of it (no sync status)`,
    hook.phase
      ? `last run ${hook.phase}${hook.from === 'live' ? ' (from the object itself: Argo CD has no record of it in its last sync)' : ' (as Argo CD recorded it)'}`
      : 'no run recorded',
    hook.finishedAt ? `ended ${formatLocal(hook.finishedAt)} · ${formatUtc(hook.finishedAt)}` : '',
    hook.message ?? '',
  ]
    .filter(Boolean)
    .join('\n');
  return (
    <span
      data-testid="node-hook"
      data-hook-type={hook.type}
      data-phase={hook.phase ?? ''}
      title={title}
      className={`truncate rounded px-1 text-xs ring-1 ring-inset ${failed ? 'bg-red-50 text-red-900 ring-red-300' : 'text-indigo-800 ring-indigo-300'}`}
    >
      {text}
    </span>
  );
}
