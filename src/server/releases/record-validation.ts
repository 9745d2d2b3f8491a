// The release recorder's state 5, validation: a server-side dry-run of every rendered object as the
// controller's field manager (validateRender reads it from the diff's dry-runs); main.ts wires it in.
import type { App } from '../../domain/app.ts';
import { shaOf } from '../../domain/release-commit.ts';
import type { AppDiff } from '../diff/index.ts';
import type { ValidationResult } from './recorder-options.ts';
import { message, type StateContext, type Tracked } from './tracking.ts';

export async function recordValidation(ctx: StateContext, app: App, rel: Tracked): Promise<void> {
  if (!ctx.o.validate) {
    ctx.emit(app, rel, 'validation', 'console', {
      status: 'unknown',
      reason: 'no server-side dry-run configured for the recorder',
    });
    return;
  }
  let v: ValidationResult;
  try {
    v = await ctx.o.validate(app);
  } catch (e) {
    ctx.emit(app, rel, 'validation', 'console', {
      status: 'unknown',
      reason: `the server-side dry-run could not run: ${message(e)}`,
    });
    return;
  }
  const rendered = shaOf(v.revision);
  if (rendered && rendered !== rel.sha) return; // the source moved on meanwhile: the next tick validates again
  const status = v.rejected.length ? 'failed' : v.unchecked.length ? 'unknown' : 'ok';
  const first = v.rejected[0] ?? v.unchecked[0];
  ctx.emit(app, rel, 'validation', 'console', {
    renderHash: v.renderHash ?? null,
    accepted: v.accepted,
    rejected: v.rejected.length,
    unchecked: v.unchecked.length,
    objects: [
      ...v.rejected.map((r) => ({ ...r, result: 'rejected' })),
      ...v.unchecked.map((r) => ({ ...r, result: 'unchecked' })),
    ].slice(0, 50),
    ...(status !== 'ok'
      ? {
          status,
          reason:
            status === 'failed'
              ? `the API server rejected ${v.rejected.length} object(s) in a dry-run, e.g. ${first?.object}: ${first?.reason}`
              : `${v.unchecked.length} object(s) could not be dry-run, e.g. ${first?.object}: ${first?.reason}`,
        }
      : {}),
  });
}

/**
 * The validation state from the diff's server-side dry-runs (as the controller's field manager, as the
 * console's identity): each rendered object the API server accepted, rejected (its words), or that could not be
 * checked (dry-run forbidden). Throws when the render is unknown.
 */
export async function validateRender(
  diffs: { diff(a: App, user: undefined): Promise<AppDiff> },
  app: App,
): Promise<ValidationResult> {
  const d = await diffs.diff(app, undefined);
  if (d.state === 'unknown') throw new Error(d.error ?? 'the render is unknown');
  const out: ValidationResult = {
    revision: d.render?.revision,
    renderHash: d.render?.renderHash,
    accepted: 0,
    rejected: [],
    unchecked: [],
  };
  for (const o of d.objects) {
    if (o.status === 'extraneous') continue;
    const object = `${o.ref.kind}/${o.ref.namespace ? `${o.ref.namespace}/` : ''}${o.ref.name}`;
    if (o.mode === 'server-dry-run') out.accepted++;
    else {
      const failed = /server-side dry-run failed: (.*)$/.exec(o.note ?? '');
      if (failed?.[1]) out.rejected.push({ object, reason: failed[1].slice(0, 500) });
      else out.unchecked.push({ object, reason: (o.note ?? 'not dry-run').slice(0, 500) });
    }
  }
  return out;
}
