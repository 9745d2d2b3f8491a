// A test file's own app on the contract tier's bare cluster (./global-setup.ts), named as an own estate is
// (test/support/own-estate.ts: namespace `t-<env>-<id>`, GitRepository `<id>`, Kustomization `<id>-app` into that
// namespace), its objects applied by the admin kubeconfig instead of by Flux: no controller runs there, no forge.
// What a contract test changes is its own; teardown deletes it.
import { randomBytes } from 'node:crypto';
import { kubectl } from '../../sandbox/state.ts';
import { BARE_GIT_URL } from './seed.ts';

export type BareEnv = 'dev' | 'staging' | 'prod';
const ENV_CLUSTER: Record<BareEnv, string> = { dev: 'nonprod', staging: 'nonprod', prod: 'prod' };

export interface BareEstate {
  id: string;
  cluster: string;
  env: BareEnv;
  namespace: string;
  /** its GitRepository (flux-system) */
  source: string;
  kustomization(): string;
  /** the console's id of its Kustomization */
  appId(): string;
  teardown(): Promise<void>;
}

/** `objects`: YAML documents applied into the estate's namespace (what Flux would have applied). */
export function bareEstate(opts: { name: string; env: BareEnv; objects?: string[] }): BareEstate {
  const cluster = ENV_CLUSTER[opts.env];
  const id = `${opts.name
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 30)}-${randomBytes(3).toString('hex')}`;
  const namespace = `t-${opts.env}-${id}`;
  const label = { 'gitops-console.dev/test-estate': id };
  const apply = (o: unknown, ns?: string) =>
    kubectl(
      cluster,
      [...(ns ? ['-n', ns] : []), 'apply', '--server-side', '--field-manager=test-estate', '-f', '-'],
      typeof o === 'string' ? o : JSON.stringify(o),
    );
  apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: label } });
  apply({
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'GitRepository',
    metadata: { name: id, namespace: 'flux-system', labels: label },
    spec: { url: BARE_GIT_URL, interval: '10m', timeout: '20s', ref: { branch: 'main' } },
  });
  apply({
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: `${id}-app`, namespace: 'flux-system', labels: { env: opts.env, ...label } },
    spec: {
      interval: '10m',
      path: `./overlays/${opts.env}`,
      targetNamespace: namespace,
      prune: true,
      wait: false,
      sourceRef: { kind: 'GitRepository', name: id },
    },
  });
  for (const o of opts.objects ?? []) apply(o, namespace);
  return {
    id,
    cluster,
    env: opts.env,
    namespace,
    source: id,
    kustomization: () => `${id}-app`,
    appId: () => `${cluster}/flux-system/kustomization/${id}-app`,
    async teardown() {
      kubectl(cluster, ['-n', 'flux-system', 'delete', 'kustomization', `${id}-app`, '--ignore-not-found']);
      kubectl(cluster, ['-n', 'flux-system', 'delete', 'gitrepository', id, '--ignore-not-found']);
      // no namespace controller runs: the namespace stays Terminating, with nothing another file reads
      kubectl(cluster, ['delete', 'namespace', namespace, '--ignore-not-found', '--wait=false']);
    },
  };
}
