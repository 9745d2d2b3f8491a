// The "Try it" cards: each a one-line story, the steps it runs with the sandbox's own scenario helpers
// (kit.ts), and where to look after it ran. The reset that undoes them all is in reset.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TryItLink } from '../../api/tryit.ts';
import { pruneHoldLine, type PruneHold } from '../../domain/prune-hold.ts';
import type { EvidenceStore } from '../evidence/index.ts';
import type { SandboxKit } from './kit.ts';

export const DEV_APP = 'nonprod/flux-system/kustomization/digital-human-dev';
export const STAGING_APP = 'nonprod/flux-system/kustomization/digital-human-staging';
export const PROD_APP = 'prod/flux-system/kustomization/digital-human-prod';
const appHref = (id: string, query = '') => `/apps/${id}${query}`;

const RENDER_WORKER_IMAGE = 'registry.example.com/digital-human/render-worker';
/** the tag "Push a new image" pushes: the dev release candidate's image, released */
export const NEW_RENDER_WORKER_TAG = '1.5.0';

/** What a running scenario is given. */
export interface ScenarioContext {
  kit: SandboxKit;
  /** reads of the evidence (the drift scenario waits for its records) */
  evidence: EvidenceStore;
  /** runs one of the scenario's declared steps; `detail` describes its value on the card */
  step<T>(name: string, fn: () => T | Promise<T>, detail?: (v: T) => string | undefined): Promise<T>;
  /** when the run started (ISO) */
  startedAt: string;
  /** what the precondition found (e.g. the freeze's id) */
  found?: string | undefined;
  /** the reset: voids the pending prune previews made before it (service deps) */
  voidPendingPreviews?: (before: string, reason: string) => Promise<number>;
  sleep(ms: number): Promise<void>;
}

export interface ScenarioDef {
  id: string;
  title: string;
  story: string;
  button: string;
  /** what must be true first, and where to make it so (the card shows it before the button) */
  needs?: { text: string; link: TryItLink };
  /** what the user sees at the links after the run */
  look: string;
  /** what the run leaves changed in the sandbox, and how to finish or undo it (said on the card, issue 39) */
  leaves?: string;
  /** where to look (the run may return more precise ones) */
  links: TryItLink[];
  /** the steps, in order (the job shows them all from the start) */
  steps: string[];
  /** checked before the intent is recorded: a refusal (409) in words, or what was found */
  precondition?: (p: PreconditionDeps) => Promise<{ ok: true; found?: string } | { ok: false; message: string }>;
  run(ctx: ScenarioContext): Promise<TryItLink[] | void>;
}

export interface PreconditionDeps {
  /** the active freeze holding an app, if any */
  activeFreezeOf(appId: string): Promise<string | undefined>;
  /** the app's "held by the prune policy" now, if the console knows it */
  pruneHoldOf(appId: string): PruneHold | undefined;
}

/**
 * Refuses a card whose run needs these apps to apply new commits while the prune policy holds one of them (another
 * card's removal waits for an approval): the card says what holds it and how to finish or undo that first.
 */
export function notHeldByPrunePolicy(
  apps: Array<{ id: string; env: string }>,
): NonNullable<ScenarioDef['precondition']> {
  return async (p) => {
    for (const a of apps) {
      const hold = p.pruneHoldOf(a.id);
      if (hold)
        return {
          ok: false,
          message: `${a.env} is ${pruneHoldLine(hold)}, so Flux applies no new commit there: approve that app’s prune preview (Prune previews; a reviewer who did not request it), or press “Reset to the seed”, then run this card`,
        };
    }
    return { ok: true };
  };
}

/** Polls `check` until it answers true; throws after `timeoutMs`, naming what it waited for. */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  opts: { timeoutMs: number; intervalMs?: number; sleep?: (ms: number) => Promise<void> },
): Promise<void> {
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const until = Date.now() + opts.timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until)
      throw new Error(`timed out after ${Math.round(opts.timeoutMs / 1000)} s waiting for ${what}`);
    await sleep(opts.intervalMs ?? 1000);
  }
}

/** An overlay with the render worker's image line set to `newTag: <tag>` (the line after its `- name:`). */
export function withRenderWorkerTag(overlay: string, tag: string): string {
  const lines = overlay.split('\n');
  const i = lines.findIndex((l) => l.trim() === `- name: ${RENDER_WORKER_IMAGE}`);
  const line = lines[i + 1];
  if (i < 0 || line === undefined) throw new Error('the overlay names no render worker image');
  lines[i + 1] = line.replace(/(newTag|digest): .*/, `newTag: ${tag}`);
  return lines.join('\n');
}

const replicasOf = (kit: SandboxKit, cluster: string, ns: string, name: string): number =>
  Number((kit.scenario.getJson(cluster, ['-n', ns, 'get', 'deployment', name]).spec as { replicas?: number }).replicas);

const short = (sha: string) => sha.slice(0, 7);

export const SCENARIOS: ScenarioDef[] = [
  {
    id: 'scale-by-hand',
    title: 'Scale a Deployment by hand',
    story:
      'Someone runs `kubectl scale` on tts-gateway in dev: the console sees the drift at once and records it; Flux takes Git’s replicas back at its next reconcile.',
    button: 'Scale tts-gateway to 3',
    look: 'On the dev app: while it lasts the tree marks tts-gateway drifted, and its header says who drifted it. Reviewers, on-call and auditors also see the episode in the app’s evidence (drift.detected by kubectl, then drift.reverted).',
    links: [
      { label: 'dev app (tts-gateway)', href: appHref(DEV_APP, '?tq=tts-gateway') },
      {
        label: 'its drift evidence',
        href: `/evidence?${new URLSearchParams({ app: DEV_APP, type: 'drift.detected' })}`,
        needs: { action: 'evidence.read', env: 'dev' },
      },
    ],
    steps: [
      'Scale tts-gateway in dev to 3 replicas by hand (kubectl scale)',
      'The console records the drift',
      'Flux reverts it at its next reconcile (every 15 s)',
    ],
    async run(ctx) {
      const { kit } = ctx;
      const before = await ctx.step(
        'Scale tts-gateway in dev to 3 replicas by hand (kubectl scale)',
        () => {
          const was = replicasOf(kit, 'nonprod', 'dev', 'tts-gateway');
          kit.scenario.kubectlScale('nonprod', 'deployment/tts-gateway', 'dev', was === 3 ? 4 : 3);
          return was;
        },
        (was) => `was ${was}`,
      );
      const recorded = (type: string) => async () =>
        (await ctx.evidence.list({ type, app: DEV_APP, from: ctx.startedAt, text: 'tts-gateway', limit: 5 })).some(
          (e) => String(e.data.object ?? '').includes('tts-gateway'),
        );
      await ctx.step('The console records the drift', () =>
        waitUntil('drift.detected on dev/tts-gateway', recorded('drift.detected'), {
          timeoutMs: 30_000,
          sleep: ctx.sleep,
        }),
      );
      await ctx.step(
        'Flux reverts it at its next reconcile (every 15 s)',
        async () => {
          const t0 = Date.now();
          let nudged = false;
          await waitUntil(
            `tts-gateway back at ${before} replicas`,
            () => {
              // a Flux that has not come round after 30 s is asked (what "Reconcile now" does)
              if (!nudged && Date.now() - t0 > 30_000) {
                nudged = true;
                kit.scenario.requestReconcile('nonprod', 'kustomization', 'digital-human-dev');
              }
              return replicasOf(kit, 'nonprod', 'dev', 'tts-gateway') === before;
            },
            { timeoutMs: 90_000, sleep: ctx.sleep },
          );
          await waitUntil('drift.reverted on dev/tts-gateway', recorded('drift.reverted'), {
            timeoutMs: 30_000,
            sleep: ctx.sleep,
          });
          return Math.round((Date.now() - t0) / 1000);
        },
        (s) => `back at ${before} after ${s} s`,
      );
    },
  },
  {
    id: 'remove-configmap',
    title: 'Remove a ConfigMap from Git',
    story:
      'render-worker-config is deleted from base/ in Git. In prod Flux does not prune: the console’s prune preview lists the orphan, and a reviewer (not the requester) approves the delete.',
    button: 'Remove it from Git',
    look: 'On the prod app press “Preview prune”: the preview lists ConfigMap render-worker-config and waits for a reviewer in Prune previews. dev and staging show “held: prune needs approval”: Flux’s own prune there is refused by the admission policy until a preview is approved.',
    leaves:
      'dev and staging held by the prune policy (the ConfigMap stays live, Flux applies no newer commit there) until a reviewer approves each one’s prune preview — that finishes it — or “Reset to the seed” puts the ConfigMap back in Git — that undoes it. “Push a new image” waits for that.',
    links: [
      { label: 'prod app (Preview prune)', href: appHref(PROD_APP) },
      { label: 'Prune previews', href: '/prune-previews' },
    ],
    steps: ['Remove base/render-worker-config.yaml in Git (a commit on main)', 'Flux applies the commit in prod'],
    async run(ctx) {
      const sha = await ctx.step(
        'Remove base/render-worker-config.yaml in Git (a commit on main)',
        () => ctx.kit.scenario.removeFromGit('render-worker-config.yaml'),
        short,
      );
      await ctx.step('Flux applies the commit in prod', () =>
        ctx.kit.scenario.waitForKustomizationRevision('prod', 'digital-human-prod', sha, 180_000),
      );
    },
  },
  {
    id: 'empty-render',
    title: 'Empty a render',
    story:
      'A bad commit makes staging’s overlay render nothing. Flux would prune every object; the console’s admission policy refuses, and only an override (two approvers) could delete them.',
    button: 'Empty staging’s render',
    look: 'On the staging app: the diff says the render is empty; “Preview prune” says it needs an override, and nothing is deleted.',
    leaves:
      'staging held by the prune policy (every object stays live, Flux applies no newer commit there) until “Reset to the seed” restores its overlay.',
    links: [{ label: 'staging app', href: appHref(STAGING_APP) }],
    steps: [
      'Make overlays/staging render no objects (a commit on main)',
      'Flux tries to apply it; the admission policy refuses its prune',
    ],
    async run(ctx) {
      const { kit } = ctx;
      const sha = await ctx.step(
        'Make overlays/staging render no objects (a commit on main)',
        () => kit.scenario.makeRenderEmpty('staging'),
        short,
      );
      let message = '';
      await ctx.step(
        'Flux tries to apply it; the admission policy refuses its prune',
        () => {
          let nudged = 0;
          return waitUntil(
            `Flux to try ${short(sha)} in staging`,
            () => {
              if (Date.now() - nudged > 5000) {
                nudged = Date.now();
                kit.scenario.requestReconcile('nonprod', 'gitrepository', 'digital-human');
                kit.scenario.requestReconcile('nonprod', 'kustomization', 'digital-human-staging');
              }
              const st = kit.scenario.getJson('nonprod', [
                '-n',
                'flux-system',
                'get',
                'kustomization',
                'digital-human-staging',
              ]).status as
                | {
                    lastAttemptedRevision?: string;
                    conditions?: Array<{ type: string; status: string; message?: string }>;
                  }
                | undefined;
              const ready = st?.conditions?.find((c) => c.type === 'Ready');
              message = ready?.message ?? '';
              return String(st?.lastAttemptedRevision ?? '').endsWith(sha) && ready?.status === 'False';
            },
            { timeoutMs: 240_000, sleep: ctx.sleep },
          );
        },
        () => message.slice(0, 200),
      );
    },
  },
  {
    id: 'freeze-incident',
    title: 'Incident: edit replicas during a freeze',
    story:
      'During an incident prod is frozen (Flux suspended) and someone hot-fixes render-worker with `kubectl edit`: 12 replicas and DEBUG_TRACE. Ending the freeze offers to write the edit back to Git as a pull request.',
    button: 'kubectl edit render-worker in prod',
    needs: {
      text: 'First freeze prod (on-call or admin): on the prod app press “Freeze”, give a reason, confirm. Then run this card.',
      link: { label: 'prod app (Freeze)', href: appHref(PROD_APP) },
    },
    look: 'On the freeze’s page: the live change by kubectl-edit; end the freeze choosing “write back” for it and the console opens a pull request on the forge.',
    leaves:
      'render-worker in prod at 12 replicas with DEBUG_TRACE until the freeze ends: ending it writes the edit back (a pull request) or lets Git win.',
    links: [{ label: 'Freezes', href: '/freezes' }],
    steps: ['kubectl edit deployment/render-worker in prod: 12 replicas, DEBUG_TRACE=1'],
    async precondition(p) {
      const id = await p.activeFreezeOf(PROD_APP);
      return id
        ? { ok: true, found: id }
        : {
            ok: false,
            message:
              'prod is not frozen: freeze digital-human-prod first (on-call or admin, “Freeze” on its page), then run this card',
          };
    },
    async run(ctx) {
      await ctx.step('kubectl edit deployment/render-worker in prod: 12 replicas, DEBUG_TRACE=1', () =>
        ctx.kit.scenario.incidentEditRenderWorker('prod', 'prod'),
      );
      return [
        ...(ctx.found ? [{ label: 'the freeze (end it, write back)', href: `/freezes/${ctx.found}` }] : []),
        { label: 'prod app', href: appHref(PROD_APP) },
      ];
    },
  },
  {
    id: 'break-prod-endpoint',
    title: 'Break prod’s endpoint',
    story:
      'prod’s business endpoint starts answering 503, then a commit lands in prod: its verification (the HTTP check after health) fails, in red. The commit changes nothing in prod’s render, so the failure counts against the release that runs there.',
    button: 'Make prod’s endpoint fail',
    look: 'On the prod app: the newest release row (the card’s commit, step 2) has a red verification (HTTP 503). It is marked “no change here”, so the environment page counts the failure against the release that runs in prod.',
    leaves:
      'prod’s business endpoint answering 503 (every later verification in prod fails) until “Reset to the seed”.',
    links: [
      { label: 'prod app (releases)', href: appHref(PROD_APP) },
      { label: 'environment prod', href: '/envs/prod', needs: { action: 'evidence.read', env: 'prod' } },
    ],
    steps: [
      'Make prod’s business endpoint answer 503',
      'A commit on main (a new release everywhere)',
      'Flux applies the commit in prod',
    ],
    async run(ctx) {
      const { kit } = ctx;
      await ctx.step('Make prod’s business endpoint answer 503', () =>
        kit.scenario.setBusinessEndpoint('prod', { mode: 'fail', status: 503 }),
      );
      const sha = await ctx.step(
        'A commit on main (a new release everywhere)',
        () => kit.scenario.commitAndPushRetrying('Try it: a new release while prod’s endpoint fails', () => undefined),
        short,
      );
      await ctx.step('Flux applies the commit in prod', () =>
        kit.scenario.waitForKustomizationRevision('prod', 'digital-human-prod', sha, 180_000),
      );
    },
  },
  {
    id: 'push-image',
    title: 'Push a new image',
    story: `render-worker:${NEW_RENDER_WORKER_TAG} is pushed to the registry and dev is pointed at it: the release chain (change, review, artifact, render, validation, reconcile, health, verification) fills in; then staging gets the same digest — the promotion.`,
    button: `Release render-worker ${NEW_RENDER_WORKER_TAG}`,
    look: 'On the dev app: the release row of the dev commit (named in step 2) with every state, its promotion “reached staging”. The promotion commit is a newer row there too, marked “no change here”: it changes nothing in dev’s render.',
    leaves: `dev and staging run render-worker:${NEW_RENDER_WORKER_TAG} until “Reset to the seed” points them back.`,
    links: [{ label: 'dev app (releases)', href: appHref(DEV_APP) }],
    precondition: notHeldByPrunePolicy([
      { id: DEV_APP, env: 'dev' },
      { id: STAGING_APP, env: 'staging' },
    ]),
    steps: [
      `Push render-worker:${NEW_RENDER_WORKER_TAG} to the registry`,
      `Point dev at render-worker:${NEW_RENDER_WORKER_TAG} (a commit on main)`,
      'Flux applies it in dev',
      'The console records dev’s release, through its verification (then it is promoted)',
      `Promote: point staging at render-worker:${NEW_RENDER_WORKER_TAG} (a commit on main)`,
      'Flux applies it in staging',
    ],
    async run(ctx) {
      const { kit } = ctx;
      const overlay = (env: string) => `overlays/${env}/kustomization.yaml`;
      const point = (env: string) => () =>
        kit.scenario.commitAndPushRetrying(`Render worker ${NEW_RENDER_WORKER_TAG} in ${env} (Try it)`, (w) =>
          kit.scenario.writeRepoFile(
            w,
            overlay(env),
            withRenderWorkerTag(readFileSync(join(w, overlay(env)), 'utf8'), NEW_RENDER_WORKER_TAG),
          ),
        );
      await ctx.step(
        `Push render-worker:${NEW_RENDER_WORKER_TAG} to the registry`,
        // a new image (a digest no env runs yet), so the release really brings it and its promotion shows
        () => kit.scenario.pushNewImage('digital-human/render-worker', NEW_RENDER_WORKER_TAG),
        (d) => d,
      );
      const dev = await ctx.step(
        `Point dev at render-worker:${NEW_RENDER_WORKER_TAG} (a commit on main)`,
        point('dev'),
        short,
      );
      await ctx.step('Flux applies it in dev', () =>
        kit.scenario.waitForKustomizationRevision('nonprod', 'digital-human-dev', dev, 180_000),
      );
      // as a careful team promotes: once dev's release is verified (a promotion commit is a newer revision of dev
      // too — a monorepo — and would leave the states dev had not recorded yet unknown, superseded)
      await ctx.step('The console records dev’s release, through its verification (then it is promoted)', () =>
        waitUntil(
          `release.verification of ${short(dev)} in dev`,
          async () =>
            (
              await ctx.evidence.list({ type: 'release.verification', app: DEV_APP, from: ctx.startedAt, limit: 20 })
            ).some((e) => e.data.sha === dev),
          { timeoutMs: 240_000, intervalMs: 2000, sleep: ctx.sleep },
        ),
      );
      const staging = await ctx.step(
        `Promote: point staging at render-worker:${NEW_RENDER_WORKER_TAG} (a commit on main)`,
        point('staging'),
        short,
      );
      await ctx.step('Flux applies it in staging', () =>
        kit.scenario.waitForKustomizationRevision('nonprod', 'digital-human-staging', staging, 180_000),
      );
      return [{ label: `dev app (release ${short(dev)})`, href: appHref(DEV_APP) }];
    },
  },
  {
    id: 'cluster-offline',
    title: 'Take a cluster offline',
    story:
      'prod’s kube-apiserver stops. The console keeps showing what it last saw, marked stale, with a banner naming the unreachable cluster; nothing pretends to be live.',
    button: 'Stop prod’s apiserver',
    look: 'On the overview: “Cluster prod is unreachable” and prod’s apps marked stale, “stale since …” on their pages.',
    leaves: 'prod’s apiserver stopped until “Reset to the seed” starts it again.',
    links: [{ label: 'All apps', href: '/' }],
    steps: ['Stop prod’s kube-apiserver'],
    async run(ctx) {
      await ctx.step('Stop prod’s kube-apiserver', () => ctx.kit.sandbox.stopApiserver('prod'));
    },
  },
];

export const scenarioById = (id: string, list: ScenarioDef[] = SCENARIOS): ScenarioDef | undefined =>
  list.find((s) => s.id === id);
