// "Reset the sandbox": undoes every card. Business endpoints answer normally, every kube-apiserver runs, open
// pull requests (write-backs, rollbacks) are closed, Git's main gets the seed's files back (one commit on top,
// so the history and the releases recorded so far stay true), and Flux applies that commit everywhere.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxKit } from './kit.ts';
import type { ScenarioContext } from './scenarios.ts';

export const RESET_STEPS = [
  'Business endpoints answer normally again',
  'Every cluster’s kube-apiserver runs',
  'Close open pull requests (write-backs, rollbacks)',
  'Git back to the seed (a commit on main with the seed’s files)',
  'Flux applies the seed in every environment',
  'Void the prune previews planned before the reset',
] as const;

/** The work tree made exactly the seed: every file but .git removed, the seed's files written. */
export function writeSeed(kit: SandboxKit, work: string): void {
  for (const e of readdirSync(work)) if (e !== '.git') rmSync(join(work, e), { recursive: true, force: true });
  for (const [path, content] of Object.entries(kit.seed.seedFiles())) kit.scenario.writeRepoFile(work, path, content);
}

export async function runReset(ctx: Omit<ScenarioContext, 'found'>): Promise<void> {
  const { kit } = ctx;
  const st = kit.sandbox.mustState();
  const envs = st.clusters.flatMap((c) => c.namespaces.map((env) => ({ cluster: c.name, env })));
  const [endpoints, apiservers, pulls, git, flux, previews] = RESET_STEPS;
  await ctx.step(
    endpoints,
    () => {
      for (const e of envs) kit.scenario.setBusinessEndpoint(e.env, { mode: 'ok' });
      return envs.map((e) => e.env).join(', ');
    },
    (v) => v,
  );
  await ctx.step(
    apiservers,
    async () => {
      // a running, ready apiserver is left alone (startApiserver checks /readyz first)
      for (const c of st.clusters) await kit.sandbox.startApiserver(c.name);
      return st.clusters.map((c) => c.name).join(', ');
    },
    (v) => v,
  );
  await ctx.step(
    pulls,
    async () => {
      const forge = kit.scenario.sandboxForge();
      const r = await kit.scenario.forgeApi(
        'admin',
        'GET',
        `/repos/${forge.repo.owner}/${forge.repo.name}/pulls?state=open&limit=50`,
      );
      if (r.status !== 200) throw new Error(`listing pull requests: HTTP ${r.status}`);
      const open = Array.isArray(r.json) ? r.json : [];
      for (const pr of open) await kit.scenario.closePullRequest(Number(pr.number));
      return open.length;
    },
    (n) => (n ? `${n} closed` : 'none open'),
  );
  const sha = await ctx.step(
    git,
    () =>
      kit.scenario.commitAndPushRetrying('Reset to the sandbox seed (Try it)', (w) => {
        if (!existsSync(join(w, '.git'))) throw new Error('not a git work tree');
        writeSeed(kit, w);
      }),
    (s) => s.slice(0, 7),
  );
  await ctx.step(
    flux,
    async () => {
      const held: string[] = [];
      const governed: string[] = [];
      await Promise.all(
        envs.map(async ({ cluster, env }) => {
          const name = `digital-human-${env}`;
          const k = kit.scenario.getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', name]);
          // a freeze suspends Flux: the freeze's end resumes it (and decides about its live changes), not a reset
          if ((k.spec as { suspend?: boolean } | undefined)?.suspend) {
            held.push(`${cluster}/${env}`);
            return;
          }
          const denied = await appliedOrPruneDenied(kit, cluster, name, sha);
          if (denied) governed.push(`${cluster}/${env}: ${denied}`);
        }),
      );
      return { held, governed };
    },
    ({ held, governed }) =>
      [
        held.length || governed.length ? '' : `every environment at ${sha.slice(0, 7)}`,
        held.length
          ? `suspended by a freeze, not applied: ${held.join(', ')} (end the freeze to let Flux apply the seed)`
          : '',
        governed.length
          ? `applied at ${sha.slice(0, 7)} except prunes the console's admission policy holds until a reviewer approves a prune preview (objects the seed does not have; request one on the app page): ${governed.join('; ')}`
          : '',
      ]
        .filter(Boolean)
        .join(' · '),
  );
  // a pending preview decided on the state before the reset (its candidates are back in Git, or others are gone):
  // none keeps waiting for a reviewer
  await ctx.step(
    previews,
    async () =>
      (await ctx.voidPendingPreviews?.(
        ctx.startedAt,
        'void: the sandbox was reset to its seed (Try it); the state this preview decided on is gone',
      )) ?? 0,
    (n) => (n ? `${n} voided` : 'none pending'),
  );
}

/**
 * Waits until Flux has applied `sha` to the Kustomization: Ready at that revision (undefined), or its attempt at
 * that revision failed only because the prune admission policy denied deleting objects the seed does not have
 * (Flux's message, returned): the reset never deletes around the governance it demonstrates.
 */
export async function appliedOrPruneDenied(
  kit: SandboxKit,
  cluster: string,
  name: string,
  sha: string,
  timeoutMs = 240_000,
): Promise<string | undefined> {
  const until = Date.now() + timeoutMs;
  let nudged = 0;
  for (;;) {
    if (Date.now() - nudged > 5_000) {
      nudged = Date.now();
      kit.scenario.requestReconcile(cluster, 'gitrepository', 'digital-human');
      kit.scenario.requestReconcile(cluster, 'kustomization', name);
    }
    const k = kit.scenario.getJson(cluster, ['-n', 'flux-system', 'get', 'kustomization', name]);
    const st = (k.status ?? {}) as {
      lastAppliedRevision?: string;
      lastAttemptedRevision?: string;
      conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
    };
    const ready = st.conditions?.find((c) => c.type === 'Ready');
    if (String(st.lastAppliedRevision ?? '').endsWith(sha) && ready?.status === 'True') return undefined;
    if (
      String(st.lastAttemptedRevision ?? '').endsWith(sha) &&
      ready?.status === 'False' &&
      ready.reason === 'PruneFailed' &&
      /needs an approved prune preview/.test(ready.message ?? '')
    )
      return (ready.message ?? '').split('\n')[0]?.slice(0, 500);
    if (Date.now() > until) throw new Error(`timed out waiting for ${cluster}/${name} at ${sha.slice(0, 8)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
