// An Argo CD hook's row in the diff (domain/argo-hooks.ts): Argo CD compares none of a hook's fields, so its row is
// neither `unchanged` nor a drift: its type and last run, the YAML of each side, and why it is not compared.
import type { HookRun } from '../../domain/argo-hooks.ts';
import type { ObjectRef } from '../../domain/refs.ts';

/** Every status at zero: a diff's counts before its rows. */
export const NO_OBJECTS = {
  changed: 0,
  missing: 0,
  extraneous: 0,
  unchanged: 0,
  unknown: 0,
  hook: 0,
} as const satisfies Record<string, 0>;

/** The row of a hook: not compared; `yaml` is each side's (masked) YAML where it exists. */
export function hookRowOf(
  ref: ObjectRef,
  hook: HookRun,
  note: string,
  yaml: { desired?: string | undefined; live?: string | undefined },
) {
  return {
    ref,
    status: 'hook' as const,
    mode: 'not-compared' as const,
    note,
    changes: [] as never[],
    ...(yaml.desired ? { desiredYaml: yaml.desired } : {}),
    ...(yaml.live ? { liveYaml: yaml.live } : {}),
    hook,
  };
}

/** Why a hook in Git is not compared, with whatever else the row had to say (an unreadable live object). */
export const hookNote = (hook: HookRun, note?: string): string =>
  [`Argo CD ${hook.type} hook: run at its sync phase, not kept in sync (Argo CD compares none of its fields)`, note]
    .filter(Boolean)
    .join('; ');

/** A live hook no longer in Git: not extraneous (Argo CD never prunes a hook; its delete policy removes it). */
export const leftHookNote = (hook: HookRun): string =>
  `Argo CD ${hook.type} hook, live and no longer in Git: Argo CD does not prune hooks; its delete policy removes it`;
