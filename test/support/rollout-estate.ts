// An Argo Rollouts canary on a test file's own estate (./own-estate.ts): the seed's checkout Rollout
// (sandbox/seed-argo.ts checkoutFiles: canary 20 % → a pause → the business check → 50 % → a pause → full, 5
// replicas, its Service) in the estate's repository, synced by the estate's Argo CD Application `checkout` into the
// estate's staging namespace. Its business check is the seed's (sandbox/rollouts.ts businessCheckTemplates: the web
// provider, each measurement must answer `status: ok`) as an AnalysisTemplate in the estate's namespace, against the
// estate's own business endpoint (./business-standin.ts, a SIMULATION): the seed's Rollout, its
// ClusterAnalysisTemplates and the shared staging endpoint are never touched. A new image is a commit to the
// estate's repository (`commit`); the pauses are the commit's (a test that promotes past them can keep the seed's
// 30 s, one that waits them out shortens them).
//
//   const co = await rolloutEstate('rollouts');
//   const sha = await co.commit(image);                              // the seed's 30 s → 10 s pauses
//   co.business.set({ mode: 'fail' });
//   await co.commit(image, { pauses: ['3s', '1s'] });
//   await co.teardown();
import { businessCheckTemplates } from '../../sandbox/rollouts.ts';
import { writeRepoFile } from '../../sandbox/scenario.ts';
import { checkoutFiles, CHECKOUT_IMAGE } from '../../sandbox/seed.ts';
import { standinEstate, type StandinEstate } from './business-standin.ts';

/** the estate's Argo CD app (its Application is `<estate id>-checkout`) */
export const CHECKOUT_APP = 'checkout';
const DIR = 'argo/checkout';
/** the business check's name: the seed's staging one, here an AnalysisTemplate of the estate's namespace */
const TEMPLATE = 'business-check-staging';

export interface RolloutFileOptions {
  /** the two pauses' durations (the seed's: 30s, 10s) */
  pauses?: [string, string];
  /** the business check's measurement interval (the seed's: 5s; three measurements) */
  checkInterval?: string;
}

/**
 * The seed's checkout files at `image` with the business check as an AnalysisTemplate of the estate (against
 * `businessUrl`) instead of the seed's ClusterAnalysisTemplate; the steps the seed's, their pauses `opts.pauses`.
 */
export function rolloutFiles(
  image: string,
  businessUrl: string,
  opts: RolloutFileOptions = {},
): Record<string, string> {
  const [first, second] = opts.pauses ?? ['30s', '10s'];
  const files = checkoutFiles(image);
  const seedRollout = files[`${DIR}/rollout.yaml`] ?? '';
  const rollout = replaceOnce(
    replaceOnce(
      replaceOnce(
        seedRollout,
        '- templateName: business-check-staging\n                clusterScope: true\n',
        `- templateName: ${TEMPLATE}\n`,
      ),
      '            duration: 30s\n',
      `            duration: ${first}\n`,
    ),
    '            duration: 10s\n',
    `            duration: ${second}\n`,
  );
  const seedCheck = businessCheckTemplates({ staging: { url: businessUrl, cluster: 'nonprod' } }).nonprod ?? '';
  const check = replaceOnce(
    replaceOnce(seedCheck, 'kind: ClusterAnalysisTemplate\n', 'kind: AnalysisTemplate\n'),
    '      interval: 5s\n',
    `      interval: ${opts.checkInterval ?? '5s'}\n`,
  );
  return { ...files, [`${DIR}/rollout.yaml`]: rollout, [`${DIR}/analysis-template.yaml`]: check };
}

/** the seed's text changed in exactly one place (a seed that changed shape fails here, not in a test's wait) */
function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0)
    throw new Error(`the seed's checkout files changed: ${JSON.stringify(from)}`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/** the estate, its own business endpoint (the Canary's webhooks and gates / the Rollout's business check) */
export interface RolloutEstate extends StandinEstate {
  /** the app's id in the console */
  app: string;
  /** commits the checkout files at `image` and waits until Argo CD synced that commit */
  commit(image: string, opts?: RolloutFileOptions): Promise<string>;
}

export async function rolloutEstate(name: string, opts: RolloutFileOptions = {}): Promise<RolloutEstate> {
  const base = await standinEstate((url) => ({
    name,
    env: 'staging',
    files: rolloutFiles(CHECKOUT_IMAGE, url, opts),
    argoApps: [{ name: CHECKOUT_APP, path: DIR }],
  }));
  const { estate, business } = base;
  return {
    ...base,
    app: estate.argoAppId(CHECKOUT_APP),
    async commit(image, o = {}) {
      const sha = estate.push(`checkout ${image.split(':').pop()} (${name} test)`, (w) => {
        for (const [p, c] of Object.entries(rolloutFiles(image, business.url, o))) writeRepoFile(w, p, c);
      });
      // synced, not healthy: a canary in progress is not
      await estate.waitArgoSynced(CHECKOUT_APP, sha, { healthy: false });
      return sha;
    },
  };
}
