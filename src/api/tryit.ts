// The guided "Try it" page (sandbox mode only): the scenario cards, a run or a reset as a job with steps.
// Not in schemas.ts on purpose: only the tryit capability and its SPA page use it.
import { z } from 'zod';
import { ACTION_NAMES } from '../domain/access.ts';

export const TryItLinkSchema = z.object({
  label: z.string(),
  href: z.string(),
  /** what the page needs (an action, in an environment): the card shows the link only to who may look there */
  needs: z.object({ action: z.enum(ACTION_NAMES), env: z.string().optional() }).optional(),
});
export type TryItLink = z.infer<typeof TryItLinkSchema>;

export const TryItScenarioSchema = z.object({
  id: z.string(),
  title: z.string(),
  /** the one-line story */
  story: z.string(),
  button: z.string(),
  /** what the card needs first (e.g. a freeze), with where to do it */
  needs: z.object({ text: z.string(), link: TryItLinkSchema }).optional(),
  /** where to look once it ran, and what you will see there */
  look: z.string(),
  /** what a run leaves changed in the sandbox, and how to finish or undo it */
  leaves: z.string().optional(),
  links: z.array(TryItLinkSchema),
});
export type TryItScenario = z.infer<typeof TryItScenarioSchema>;

export const TRYIT_STEP_STATES = ['pending', 'running', 'done', 'failed', 'skipped'] as const;
export const TryItStepSchema = z.object({
  name: z.string(),
  state: z.enum(TRYIT_STEP_STATES),
  detail: z.string().optional(),
});
export type TryItStep = z.infer<typeof TryItStepSchema>;

export const TryItJobSchema = z.object({
  id: z.string(),
  kind: z.enum(['scenario', 'reset']),
  /** the scenario's id (a run) */
  scenario: z.string().optional(),
  title: z.string(),
  state: z.enum(['running', 'done', 'failed']),
  startedBy: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().optional(),
  steps: z.array(TryItStepSchema),
  /** the failure, in words */
  error: z.string().optional(),
  /** where to look (set when the run is done) */
  links: z.array(TryItLinkSchema),
  /** the intent's evidence record */
  intentSeq: z.number(),
});
export type TryItJob = z.infer<typeof TryItJobSchema>;

export const TryItScenariosResponse = z.object({
  scenarios: z.array(TryItScenarioSchema),
  /** whether this user may run scenarios and reset (developer, oncall or admin) */
  canRun: z.boolean(),
  /** the job running now, if any (one at a time: the sandbox is shared) */
  running: TryItJobSchema.optional(),
  /** the newest job of each scenario (and of the reset), newest first */
  recent: z.array(TryItJobSchema),
});
export type TryItScenariosResponse = z.infer<typeof TryItScenariosResponse>;

export const TryItJobResponse = z.object({ job: TryItJobSchema });
export type TryItJobResponse = z.infer<typeof TryItJobResponse>;

export const TryItScenarioParams = z.object({ id: z.string().regex(/^[a-z0-9-]{1,64}$/, 'not a scenario id') });
export const TryItJobParams = z.object({ id: z.string().regex(/^try-[0-9a-f]{8}$/, 'not a job id') });
