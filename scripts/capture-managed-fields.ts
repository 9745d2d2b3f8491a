// Captures real managedFields from the sandbox apiserver as test fixtures for ownersByPath:
//   npx tsx scripts/capture-managed-fields.ts
// A Deployment applied by kustomize-controller, edited with kubectl-edit (replicas + an env var), scaled
// through /scale by an HPA-style controller, with status written by kube-controller-manager; and a Service
// whose annotation a cloud controller wrote.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, startSandbox } from '../sandbox/sandbox.ts';
import {
  getJson,
  incidentEditRenderWorker,
  scaleAsController,
  setSuspended,
  requestReconcile,
} from '../sandbox/scenario.ts';

await startSandbox({ reuse: true });
setSuspended('nonprod', 'digital-human-staging', true);
try {
  incidentEditRenderWorker('nonprod', 'staging');
  scaleAsController('nonprod', 'render-worker', 'staging', 9);
  const deployment = getJson('nonprod', ['-n', 'staging', 'get', 'deployment', 'render-worker']);
  const service = getJson('nonprod', ['-n', 'staging', 'get', 'service', 'tts-gateway']);
  const strip = (o: Record<string, unknown>) => ({
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: {
      name: (o.metadata as { name: string }).name,
      namespace: (o.metadata as { namespace: string }).namespace,
      managedFields: (o.metadata as { managedFields: unknown }).managedFields,
    },
  });
  writeFileSync(
    join(REPO_ROOT, 'src/domain/fixtures/managed-fields-sandbox.json'),
    `${JSON.stringify({ capturedFrom: 'sandbox kube-apiserver v1.36.3', capturedAt: new Date().toISOString(), deployment: strip(deployment), service: strip(service) }, null, 2)}\n`,
  );
  console.log('captured');
} finally {
  setSuspended('nonprod', 'digital-human-staging', false);
  requestReconcile('nonprod', 'kustomization', 'digital-human-staging');
}
process.exit(0);
