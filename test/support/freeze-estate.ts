// The freeze files' own estate (./own-estate.ts), on staging like the seed's apps they used to freeze: the seed's
// digital-human staging service (base/ and overlays/staging/) as a Flux Kustomization `app`, and the seed's edge
// gateway (argo/edge-gateway/: a Deployment of 2 replicas and its Service) as an Argo CD Application
// `edge-gateway`, automated with prune and self-heal like the seed's edge-gateway-staging, both into the estate's
// namespace (`t-staging-*`, mapped to staging by the test consoles). The staging overlay declares that namespace,
// as the seed's declares `staging`: the write-back places a live change by the namespace Git gives the object. A
// freeze, a hand edit, a write-back branch and its pull request all land on the estate (its repository on the
// forge); teardown deletes every one of them.
//
//   const estate = await freezeEstate('freeze');
//   FLUX_APP = estate.appId(); ARGO_APP = estate.argoAppId(EDGE_GATEWAY);
//   …
//   await estate.teardown();
import { seedFiles } from '../../sandbox/seed.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from './own-estate.ts';

/** the estate's Argo CD app (its Application is `<estate id>-edge-gateway`) */
export const EDGE_GATEWAY = 'edge-gateway';
const EDGE_DIR = 'argo/edge-gateway';
const OVERLAY = 'overlays/staging/kustomization.yaml';

export async function freezeEstate(name: string): Promise<Estate> {
  const seed = seedFiles();
  const edge = Object.fromEntries(Object.entries(seed).filter(([path]) => path.startsWith(`${EDGE_DIR}/`)));
  if (!Object.keys(edge).length) throw new Error(`the seed has no ${EDGE_DIR}/`);
  const template = digitalHumanTemplate('staging');
  const overlay = template[OVERLAY] ?? '';
  if (!/^namespace: staging$/m.test(overlay)) throw new Error(`${OVERLAY} of the seed declares no namespace staging`);
  return ownEstate({
    name,
    env: 'staging',
    files: { ...template, ...edge },
    namedFiles: ({ namespace }) => ({ [OVERLAY]: overlay.replace(/^namespace: staging$/m, `namespace: ${namespace}`) }),
    apps: [{ name: 'app', path: 'overlays/staging' }],
    argoApps: [{ name: EDGE_GATEWAY, path: EDGE_DIR, syncPolicy: { automated: { prune: true, selfHeal: true } } }],
  });
}
