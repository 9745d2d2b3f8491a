// Manifests per release (issue 28): what keeping the masked render adds to recording a release's render state.
// Reference, in the same run: the same recording without it — the render (the sandbox's real kustomize over a
// generated app of BENCH_MANIFEST_OBJECTS objects, default 1,000; the YAML parse alone when no kustomize is
// built), the render hash, and the evidence record appended to a real SQLite store. With: the same, plus the
// manifest's lookup and its compressed insert (store/manifest-store.ts). Each release changes one object, so
// every render is new (the worst case: nothing is shared). Prints ms per release, the ratio, met / not met
// against "< 20 % more", and the stored size per 1,000 such releases.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRendered, renderCanonical, renderHash } from '../src/server/diff/render.ts';
import { openEvidenceStore } from '../src/server/evidence/index.ts';
import { ManifestStore } from '../src/server/store/manifest-store.ts';

const OBJECTS = Number(process.env.BENCH_MANIFEST_OBJECTS ?? 1000);
const RELEASES = Number(process.env.BENCH_MANIFEST_RELEASES ?? 20);
const KUSTOMIZE = join(process.cwd(), '.sandbox/bin/kustomize');

const dir = mkdtempSync(join(tmpdir(), 'bench-manifests-'));
const app = join(dir, 'app');
mkdirSync(app);

function writeApp(release: number): void {
  const docs: string[] = [];
  for (let i = 0; i < OBJECTS; i++) {
    const kind = i % 3;
    const name = `svc-${i}`;
    if (kind === 0)
      docs.push(`apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name}, labels: { app: ${name} } }
spec:
  replicas: ${i === 0 ? release + 1 : 2}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      containers:
        - name: main
          image: registry.example.com/team/${name}:1.${i % 7}.0
          ports: [{ containerPort: 8080 }]
          env: [{ name: LOG_LEVEL, value: info }, { name: REGION, value: eu-west-1 }]
          resources: { requests: { cpu: 100m, memory: 128Mi } }`);
    else if (kind === 1)
      docs.push(`apiVersion: v1
kind: Service
metadata: { name: ${name} }
spec: { selector: { app: ${name} }, ports: [{ port: 80, targetPort: 8080 }] }`);
    else
      docs.push(`apiVersion: v1
kind: ConfigMap
metadata: { name: ${name} }
data: { settings.json: '{"feature":${i},"timeoutMs":3000}' }`);
  }
  writeFileSync(join(app, 'all.yaml'), docs.join('\n---\n'));
  writeFileSync(join(app, 'kustomization.yaml'), 'namespace: bench\nresources: [all.yaml]\n');
}

const haveKustomize = existsSync(KUSTOMIZE);
function render(): ReturnType<typeof parseRendered> {
  const text = haveKustomize
    ? execFileSync(KUSTOMIZE, ['build', app], { encoding: 'utf8', maxBuffer: 256 << 20 })
    : (execFileSync('cat', [join(app, 'all.yaml')], { encoding: 'utf8', maxBuffer: 256 << 20 }) as string);
  return parseRendered(text);
}

async function main(): Promise<void> {
  const store = await openEvidenceStore({ dataDir: dir });
  const manifests = new ManifestStore(store);
  const timings = { without: [] as number[], with: [] as number[] };
  // alternate the two, so the machine's drift falls on both
  for (let r = 0; r < RELEASES * 2; r++) {
    const keep = r % 2 === 1;
    writeApp(r);
    const t0 = performance.now();
    const objects = render();
    const hash = renderHash(objects);
    let manifest: string | undefined;
    if (keep)
      manifest = (await manifests.touch(hash))
        ? 'present'
        : await manifests.put(hash, renderCanonical(objects), objects.length);
    await store.append({
      time: new Date().toISOString(),
      type: 'release.render',
      actor: 'console',
      app: 'bench/flux-system/kustomization/app',
      cluster: 'bench',
      env: 'dev',
      data: {
        sha: r.toString(16).padStart(40, '0'),
        renderHash: hash,
        objects: objects.length,
        ...(manifest ? { manifest } : {}),
      },
    });
    (keep ? timings.with : timings.without).push(performance.now() - t0);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const a = med(timings.without);
  const b = med(timings.with);
  const s = await manifests.stats();
  const ratio = b / a;
  console.log(
    `render: ${haveKustomize ? 'kustomize build (the sandbox binary)' : 'YAML parse only (no .sandbox/bin/kustomize: run the sandbox once)'}, ${OBJECTS} objects, ${RELEASES} releases each way`,
  );
  console.log(
    `recording a release's render state, median: without manifests ${a.toFixed(1)} ms, with ${b.toFixed(1)} ms`,
  );
  console.log(
    `ratio with/without: ${ratio.toFixed(3)} (+${((ratio - 1) * 100).toFixed(1)} %) — target < +20 %: ${ratio < 1.2 ? 'met' : 'NOT MET'}`,
  );
  console.log(
    `stored: ${s.manifests} manifests, ${(s.bytes / 1024 / 1024).toFixed(2)} MiB canonical JSON as ${(s.storedBytes / 1024 / 1024).toFixed(2)} MiB stored (gzip, base64); per 1,000 releases of a ${OBJECTS}-object app that all differ: ${(((s.storedBytes / s.manifests) * 1000) / 1024 / 1024).toFixed(1)} MiB`,
  );
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

await main();
