// Diff benchmark (npm run bench:diff):
//  1. ownersByPath on an object with 10,000 managed fields; reference: JSON.parse of the same managedFields.
//  2. Whole-app diff of 1,000 objects end to end through the BFF (render with flux-render, 1,000 server-side
//     dry-runs, field diff with owners); reference in the same run: `kubectl diff --server-side` on the same
//     rendered objects (the sandbox-built kubectl).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownersByPath } from '../src/domain/managed-fields.ts';
import { bin, kubectl, startSandbox } from '../sandbox/sandbox.ts';
import { waitFor } from '../sandbox/procs.ts';
import { commitAndPush, waitForKustomizationRevision, writeRepoFile } from '../sandbox/scenario.ts';
import { authedFetch, startTestConsole } from '../test/support/console.ts';

const N = Number(process.env.BENCH_DIFF_OBJECTS ?? 1000);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function benchOwners(): void {
  const fields: Record<string, unknown> = {};
  for (let i = 0; i < 10_000; i++) fields[`f:key-${i}`] = {};
  const mf = [
    {
      manager: 'kustomize-controller',
      operation: 'Apply',
      apiVersion: 'v1',
      time: '2026-11-30T12:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': fields },
    },
  ];
  const text = JSON.stringify(mf);
  const obj = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'big', managedFields: JSON.parse(text) as unknown },
  };
  for (let i = 0; i < 5; i++) ownersByPath(obj);
  const t1: number[] = [];
  const t2: number[] = [];
  for (let i = 0; i < 30; i++) {
    let t = performance.now();
    const o = ownersByPath(obj);
    t1.push(performance.now() - t);
    if (Object.keys(o).length !== 10_000) throw new Error('decoder lost fields');
    t = performance.now();
    JSON.parse(text);
    t2.push(performance.now() - t);
  }
  console.log(
    `\n# ownersByPath, 10,000 managed fields: median ${median(t1).toFixed(2)} ms; reference JSON.parse of the same managedFields ${median(t2).toFixed(2)} ms (ratio ${(median(t1) / median(t2)).toFixed(1)}x)`,
  );
}

async function benchAppDiff(): Promise<void> {
  await startSandbox({ reuse: true });
  kubectl(
    'nonprod',
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-diff' } }),
  );
  const docs = Array.from(
    { length: N },
    (_, i) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg-${i}\n  labels:\n    app: bench\ndata:\n  index: "${i}"\n  payload: ${'x'.repeat(64)}\n`,
  ).join('---\n');
  const sha = commitAndPush(`bench: ${N} objects`, (w) => writeRepoFile(w, 'bench/diff/objects.yaml', docs));
  kubectl(
    'nonprod',
    ['apply', '--server-side', '--field-manager=bench', '-f', '-'],
    JSON.stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'bench-diff', namespace: 'flux-system', labels: { env: 'dev' } },
      spec: {
        interval: '10m',
        path: './bench/diff',
        targetNamespace: 'bench-diff',
        prune: false,
        sourceRef: { kind: 'GitRepository', name: 'digital-human' },
      },
    }),
  );
  await waitForKustomizationRevision('nonprod', 'bench-diff', sha, 300_000);
  const con = await startTestConsole();
  try {
    await waitFor('console ready', async () => (await fetch(`${con.url}/readyz`)).status === 200, {
      timeoutMs: 60_000,
    });
    const url = `${con.url}/api/apps/nonprod/flux-system/kustomization/bench-diff/diff`;
    await waitFor('app known', async () => (await authedFetch(url)).status === 200, { timeoutMs: 60_000 });
    const ours: number[] = [];
    let objects = 0;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      const d = (await (await authedFetch(url)).json()) as { objects: unknown[]; state: string };
      ours.push(performance.now() - t);
      objects = d.objects.length;
      if (d.state !== 'ok') throw new Error('diff state not ok');
    }
    // reference: kubectl diff --server-side on the same rendered objects
    const dir = mkdtempSync(join(tmpdir(), 'bench-diff-'));
    const rendered = docs
      .split('---\n')
      .map((d) => d.replace('metadata:\n', 'metadata:\n  namespace: bench-diff\n'))
      .join('---\n');
    writeFileSync(join(dir, 'rendered.yaml'), rendered);
    const kc = JSON.parse(
      execFileSync('cat', [join(process.cwd(), '.sandbox/run/state.json')], { encoding: 'utf8' }),
    ) as { clusters: Array<{ name: string; kubeconfig: string }> };
    const kubeconfig = kc.clusters.find((c) => c.name === 'nonprod')?.kubeconfig ?? '';
    const ref: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      const r = spawnSync(
        bin('kubectl'),
        [
          '--kubeconfig',
          kubeconfig,
          'diff',
          '--server-side',
          '--field-manager=kustomize-controller',
          '--force-conflicts',
          '-f',
          join(dir, 'rendered.yaml'),
        ],
        { encoding: 'utf8', maxBuffer: 256 << 20 },
      );
      ref.push(performance.now() - t);
      if (r.status !== 0 && r.status !== 1) throw new Error(`kubectl diff failed: ${r.stderr}`);
    }
    console.log(
      `\n# whole-app diff of ${objects} objects (render + server-side dry-run + field diff with owners), median of 3`,
    );
    console.log(`console BFF /diff        ${median(ours).toFixed(0)} ms`);
    console.log(`kubectl diff --server-side (same objects, same cluster) ${median(ref).toFixed(0)} ms`);
    console.log(`ratio console / kubectl  ${(median(ours) / median(ref)).toFixed(2)}x`);
  } finally {
    await con.close();
    kubectl('nonprod', [
      '-n',
      'flux-system',
      'delete',
      'kustomization',
      'bench-diff',
      '--ignore-not-found',
      '--wait=false',
    ]);
    kubectl('nonprod', ['delete', 'namespace', 'bench-diff', '--wait=false']);
  }
}

benchOwners();
if (!process.argv.includes('--owners-only')) await benchAppDiff();
process.exit(0);
