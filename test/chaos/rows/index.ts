// The chaos matrix's rows (issue 42), in the order the matrix prints them.
import type { ActionRow } from '../types.ts';
import { appsetShrink } from './appset-shrink.ts';
import { evidenceExport } from './evidence-export.ts';
import { freezeEnd } from './freeze-end.ts';
import { freezeStart } from './freeze-start.ts';
import { pruneExecute } from './prune-execute.ts';
import { releaseRecord } from './release-record.ts';
import { rollbackPr } from './rollback-pr.ts';
import { rolloutControl } from './rollout-control.ts';
import { sinkDelivery } from './sink-delivery.ts';

export const ROWS: Array<ActionRow<unknown>> = [
  pruneExecute,
  appsetShrink,
  freezeStart,
  freezeEnd,
  rollbackPr,
  rolloutControl,
  releaseRecord,
  evidenceExport,
  sinkDelivery,
] as Array<ActionRow<unknown>>;
