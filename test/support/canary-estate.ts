// A Flagger Canary on a test file's own estate (./own-estate.ts): the seed's payments app (sandbox/seed-payments.ts
// paymentsFiles: a Deployment and its Canary, blue/green on the kubernetes provider, 3 iterations, its business check
// and gates as webhooks) in the estate's repository, applied by the estate's Flux Kustomization `payments` into the
// estate's staging namespace, with the estate's own business endpoint (./business-standin.ts, a SIMULATION) as the
// Canary's `BUSINESS_URL`. The real Flagger analyses it; the seed's Canary and the shared staging endpoint are never
// touched. A new revision is a commit to the estate's repository (`commit`).
//
//   const pay = await canaryEstate('flagger');
//   const sha = await pay.commit(image, { gate: true });
//   pay.business.set({ mode: 'fail' });
//   …
//   await pay.teardown();
import { writeRepoFile } from '../../sandbox/scenario.ts';
import { paymentsFiles, PAYMENTS_IMAGE } from '../../sandbox/seed.ts';
import { standinEstate, type StandinEstate } from './business-standin.ts';

/** the estate's app that applies the Canary (its Kustomization is `<estate id>-payments`) */
export const PAYMENTS_APP = 'payments';
const DIR = 'flux/payments';

/** the estate, its own business endpoint (the Canary's webhooks and gates / the Rollout's business check) */
export interface CanaryEstate extends StandinEstate {
  /** the app's id in the console */
  app: string;
  /** commits the payments files at `image` (a change note: always a new revision) and waits until Flux applied it */
  commit(image: string, opts?: { gate?: boolean }): Promise<string>;
}

export async function canaryEstate(name: string): Promise<CanaryEstate> {
  const base = await standinEstate((url) => ({
    name,
    env: 'staging',
    files: paymentsFiles(PAYMENTS_IMAGE),
    // like the seed's payments-staging (sandbox/flagger.ts flaggerAppObjects): the endpoint's URL substituted
    apps: [{ name: PAYMENTS_APP, path: DIR, spec: { postBuild: { substitute: { BUSINESS_URL: url } } } }],
  }));
  const { estate } = base;
  return {
    ...base,
    app: estate.appId(PAYMENTS_APP),
    async commit(image, opts = {}) {
      const note = `${name} test ${Date.now()}`;
      const sha = estate.push(`payments ${image.split(':').pop()} (${note})`, (w) => {
        for (const [p, c] of Object.entries(paymentsFiles(image, note, opts))) writeRepoFile(w, p, c);
      });
      await estate.waitApplied(sha, PAYMENTS_APP);
      return sha;
    },
  };
}
