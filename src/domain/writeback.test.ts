// The write-back plan against the sandbox's seed repository (over 500 lines on purpose: each case is one Git
// layout and its expected placement, and they share the seed's files).
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PROD_RENDER_WORKER_DIGEST, SEED_IMAGE_HOST, seedFiles } from '../../sandbox/seed.ts';
import { planWriteBack, type Placement, type WriteBackChange } from './writeback.ts';

// The fixture repository is the sandbox's seed itself, so these tables follow it when it changes.
const seed = seedFiles();
const DEV_KUST = 'overlays/dev/kustomization.yaml';
const EDGE = 'argo/edge-gateway/deployment.yaml';
const IMG = `${SEED_IMAGE_HOST}/digital-human`;

const deploy = (name: string, namespace: string | null = 'dev') => ({
  group: 'apps',
  kind: 'Deployment',
  namespace,
  name,
});
const configMap = (name: string, namespace = 'dev') => ({ group: '', kind: 'ConfigMap', namespace, name });
const change = (
  ref: WriteBackChange['ref'],
  path: string,
  liveValue: unknown,
  id = `${ref.kind}/${ref.name}/${path}`,
): WriteBackChange => ({ id, ref, path, liveValue });
const image = (container: string) => `spec.template.spec.containers[name=${container}].image`;

function plan(appPath: string, changes: WriteBackChange[], extra: Record<string, string | undefined> = {}) {
  const files: Record<string, string> = { ...seed };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete files[k];
    else files[k] = v;
  }
  return { ...planWriteBack({ appPath, files, changes }), before: files };
}

/** The lines that differ (LCS), as `-old` / `+new`, removals before additions within a hunk. */
function lineDiff(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const lcs = a.map(() => new Array<number>(b.length + 1).fill(0));
  lcs.push(new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (j >= b.length || (i < a.length && lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) out.push(`-${a[i++]}`);
    else out.push(`+${b[j++]}`);
  }
  return out;
}

const placed = (p: Placement) => (p.placed ? { file: p.file, how: p.how } : { reason: p.reason });
const docOf = (text: string, index = 0): Record<string, unknown> =>
  parseAllDocuments(text)[index]!.toJS() as Record<string, unknown>;

describe('planWriteBack: spec.replicas', () => {
  it('updates the count of the overlay’s replicas: entry, one line and nothing else', () => {
    const r = plan('./overlays/dev', [change(deploy('render-worker'), 'spec.replicas', 12)]);
    expect(r.placements.map(placed)).toEqual([{ file: DEV_KUST, how: 'kustomize-replicas' }]);
    expect(Object.keys(r.files)).toEqual([DEV_KUST]);
    expect(lineDiff(seed[DEV_KUST]!, r.files[DEV_KUST]!)).toEqual(['-    count: 4', '+    count: 12']);
  });

  it('edits the overlay patch that sets replicas when there is no replicas: entry', () => {
    const kust = seed[DEV_KUST]!.replace(/replicas:\n(?: {2}- name: \S+\n {4}count: \d+\n)+/, '').concat(
      'patches:\n  - path: scale.yaml\n',
    );
    const patch = `# keep render-worker warm\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: render-worker\nspec:\n  replicas: 4 # incident 41\n`;
    const r = plan('overlays/dev', [change(deploy('render-worker'), 'spec.replicas', 12)], {
      [DEV_KUST]: kust,
      'overlays/dev/scale.yaml': patch,
    });
    expect(r.placements.map(placed)).toEqual([{ file: 'overlays/dev/scale.yaml', how: 'patch' }]);
    expect(r.files['overlays/dev/scale.yaml']).toBe(patch.replace('replicas: 4 #', 'replicas: 12 #'));
  });

  it('edits the manifest of a plain directory app in place', () => {
    const r = plan('argo/edge-gateway', [change(deploy('edge-gateway', 'edge'), 'spec.replicas', 5)]);
    expect(r.placements.map(placed)).toEqual([{ file: EDGE, how: 'resource' }]);
    expect(lineDiff(seed[EDGE]!, r.files[EDGE]!)).toEqual(['-  replicas: 2', '+  replicas: 5']);
  });

  it('edits a manifest the overlay’s own kustomization lists', () => {
    const kust = 'resources:\n  - worker.yaml\n';
    const worker = seed['base/render-worker.yaml']!;
    const r = plan('apps/solo', [change(deploy('render-worker', null), 'spec.replicas', 3)], {
      'apps/solo/kustomization.yaml': kust,
      'apps/solo/worker.yaml': worker,
    });
    expect(r.placements.map(placed)).toEqual([{ file: 'apps/solo/worker.yaml', how: 'resource' }]);
    expect(lineDiff(worker, r.files['apps/solo/worker.yaml']!)).toEqual(['-  replicas: 1', '+  replicas: 3']);
  });

  it('adds a replicas: entry to the overlay for a workload only its shared base declares', () => {
    const kust = seed[DEV_KUST]!.replace('  - name: session-cache\n    count: 1\n', '');
    const r = plan('overlays/dev', [change(deploy('session-cache'), 'spec.replicas', 3)], { [DEV_KUST]: kust });
    expect(r.placements.map(placed)).toEqual([{ file: DEV_KUST, how: 'kustomize-replicas' }]);
    expect(Object.keys(r.files)).toEqual([DEV_KUST]); // never base/session-cache.yaml
    expect(docOf(r.files[DEV_KUST]!).replicas).toEqual([
      { name: 'render-worker', count: 4 },
      { name: 'tts-gateway', count: 1 },
      { name: 'session-cache', count: 3 },
    ]);
    expect(lineDiff(kust, r.files[DEV_KUST]!)).toEqual(['+  - name: session-cache', '+    count: 3']);
  });

  it('creates the replicas: list when the overlay has none', () => {
    const kust = 'resources:\n  - ../../base\n';
    const r = plan('overlays/dev', [change(deploy('tts-gateway', null), 'spec.replicas', 2)], { [DEV_KUST]: kust });
    expect(r.files[DEV_KUST]).toBe(`${kust}replicas:\n  - name: tts-gateway\n    count: 2\n`);
  });
});

describe('planWriteBack: container images', () => {
  it.each([
    ['dev: a new tag', 'dev', `${IMG}/render-worker:1.5.1`, ['-    newTag: 1.5.0-rc.1', '+    newTag: 1.5.1']],
    [
      'prod: a new digest',
      'prod',
      `${IMG}/render-worker@sha256:${'1'.repeat(64)}`,
      [`-    digest: ${PROD_RENDER_WORKER_DIGEST}`, `+    digest: sha256:${'1'.repeat(64)}`],
    ],
    [
      'prod: digest → tag',
      'prod',
      `${IMG}/render-worker:1.4.3`,
      [`-    digest: ${PROD_RENDER_WORKER_DIGEST}`, '+    newTag: 1.4.3'],
    ],
    [
      'dev: another repository',
      'dev',
      `mirror.example.org/render-worker:1.5.1`,
      ['-    newTag: 1.5.0-rc.1', '+    newTag: 1.5.1', '+    newName: mirror.example.org/render-worker'],
    ],
  ])('edits the overlay’s images: entry (%s)', (_label, env, live, diff) => {
    const file = `overlays/${env}/kustomization.yaml`;
    const r = plan(`overlays/${env}`, [change(deploy('render-worker', env), image('render'), live)]);
    expect(r.placements.map(placed)).toEqual([{ file, how: 'kustomize-images' }]);
    expect(Object.keys(r.files)).toEqual([file]);
    expect(lineDiff(seed[file]!, r.files[file]!).sort()).toEqual([...diff].sort());
  });

  it('adds an images: entry for an image only the base names', () => {
    const live = `${IMG}/session-cache:7.4`;
    const r = plan('overlays/dev', [change(deploy('session-cache'), image('session'), live)]);
    expect(r.placements.map(placed)).toEqual([{ file: DEV_KUST, how: 'kustomize-images' }]);
    expect(Object.keys(r.files)).toEqual([DEV_KUST]);
    expect((docOf(r.files[DEV_KUST]!).images as unknown[]).at(-1)).toEqual({
      name: `${IMG}/session-cache`,
      newTag: '7.4', // a string: 7.4 would render as a number
    });
  });

  it('edits the overlay patch that sets the image when no images: entry matches it', () => {
    const patch = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: session-cache
spec:
  template:
    spec:
      containers:
        - name: session
          image: mirror.example.org/session-cache:8 # mirrored during INC-7
`;
    const r = plan(
      'overlays/dev',
      [change(deploy('session-cache'), image('session'), 'mirror.example.org/session-cache:9')],
      { [DEV_KUST]: `${seed[DEV_KUST]}patches:\n  - path: mirror.yaml\n`, 'overlays/dev/mirror.yaml': patch },
    );
    expect(r.placements.map(placed)).toEqual([{ file: 'overlays/dev/mirror.yaml', how: 'patch' }]);
    expect(r.files['overlays/dev/mirror.yaml']).toBe(patch.replace('session-cache:8', 'session-cache:9'));
  });

  it('edits the images: entry that matches the image an overlay patch sets', () => {
    const patch = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: tts-gateway
spec:
  template:
    spec:
      containers:
        - name: tts
          image: ${IMG}/tts-gateway:2.0.0
`;
    const r = plan('overlays/dev', [change(deploy('tts-gateway'), image('tts'), `${IMG}/tts-gateway:2.1.1`)], {
      [DEV_KUST]: `${seed[DEV_KUST]}patches:\n  - path: tts.yaml\n`,
      'overlays/dev/tts.yaml': patch,
    });
    expect(r.placements.map(placed)).toEqual([{ file: DEV_KUST, how: 'kustomize-images' }]);
    expect(Object.keys(r.files)).toEqual([DEV_KUST]);
  });

  it('edits the image in the manifest of a plain directory app', () => {
    const live = `${IMG}/edge-gateway@sha256:${'2'.repeat(64)}`;
    const r = plan('argo/edge-gateway', [change(deploy('edge-gateway', 'edge'), image('edge'), live)]);
    expect(r.placements.map(placed)).toEqual([{ file: EDGE, how: 'resource' }]);
    expect(lineDiff(seed[EDGE]!, r.files[EDGE]!)).toEqual([
      `-          image: ${IMG}/edge-gateway:0.9.3`,
      `+          image: ${live}`,
    ]);
  });
});

describe('planWriteBack: other fields', () => {
  const quality = 'spec.template.spec.containers[name=render].env[name=RENDER_QUALITY].value';

  it('edits the overlay patch file that sets the field (patchesStrategicMerge)', () => {
    const patch = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: render-worker
spec:
  template:
    spec:
      containers:
        - name: render
          env:
            - name: RENDER_QUALITY
              value: standard # tuned for dev
`;
    const r = plan('overlays/dev', [change(deploy('render-worker'), quality, 'high')], {
      [DEV_KUST]: `${seed[DEV_KUST]}patchesStrategicMerge:\n  - quality.yaml\n`,
      'overlays/dev/quality.yaml': patch,
    });
    expect(r.placements.map(placed)).toEqual([{ file: 'overlays/dev/quality.yaml', how: 'patch' }]);
    expect(r.files['overlays/dev/quality.yaml']).toBe(patch.replace('value: standard #', 'value: high #'));
  });

  it('edits an inline patch with a target in the kustomization', () => {
    const kust = `${seed[DEV_KUST]}patches:
  - target:
      kind: Deployment
      name: render-.*
    patch: |
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: any
      spec:
        minReadySeconds: 5
`;
    const r = plan('overlays/dev', [change(deploy('render-worker'), 'spec.minReadySeconds', 30)], { [DEV_KUST]: kust });
    expect(r.placements.map(placed)).toEqual([{ file: DEV_KUST, how: 'patch' }]);
    expect(lineDiff(kust, r.files[DEV_KUST]!)).toEqual(['-        minReadySeconds: 5', '+        minReadySeconds: 30']);
  });

  it('edits the value of a JSON 6902 operation on the field', () => {
    const kust = `${seed[DEV_KUST]}patches:
  - path: ops.yaml
    target:
      kind: ConfigMap
      name: render-worker-config
`;
    const ops = '- op: replace\n  path: /data/codec\n  value: h264\n';
    const r = plan('overlays/dev', [change(configMap('render-worker-config'), 'data.codec', 'av1')], {
      [DEV_KUST]: kust,
      'overlays/dev/ops.yaml': ops,
    });
    expect(r.placements.map(placed)).toEqual([{ file: 'overlays/dev/ops.yaml', how: 'patch' }]);
    expect(r.files['overlays/dev/ops.yaml']).toBe(ops.replace('h264', 'av1'));
  });

  it('edits the manifest in place, adding a field it lacks', () => {
    const r = plan('argo/edge-gateway', [
      change(deploy('edge-gateway', 'edge'), 'metadata.labels["example.com/incident"]', 'INC-42'),
      change(deploy('edge-gateway', 'edge'), 'spec.template.spec.containers[name=edge].env[name=MODE].value', 'safe'),
    ]);
    expect(r.placements.map(placed)).toEqual([
      { file: EDGE, how: 'resource' },
      { file: EDGE, how: 'resource' },
    ]);
    const obj = docOf(r.files[EDGE]!) as {
      metadata: { labels: object };
      spec: { template: { spec: { containers: Array<{ env?: unknown }> } } };
    };
    expect(obj.metadata.labels).toMatchObject({ 'example.com/incident': 'INC-42' });
    expect(obj.spec.template.spec.containers[0]!.env).toEqual([{ name: 'MODE', value: 'safe' }]);
  });

  it('writes a new strategic-merge patch for an object of the shared base and lists it', () => {
    const r = plan('overlays/dev', [
      change(deploy('render-worker'), quality, 'high'),
      change(deploy('render-worker'), 'metadata.annotations["example.com/why"]', 'incident 42'),
      change(configMap('render-worker-config'), 'data["max-sessions"]', '16'),
    ]);
    const patch = 'overlays/dev/freeze-writeback-render-worker.yaml';
    const cmPatch = 'overlays/dev/freeze-writeback-render-worker-config.yaml';
    expect(r.placements.map(placed)).toEqual([
      { file: patch, how: 'new-patch' },
      { file: patch, how: 'new-patch' },
      { file: cmPatch, how: 'new-patch' },
    ]);
    expect(Object.keys(r.files).sort()).toEqual([DEV_KUST, patch, cmPatch].sort()); // no file of base/
    expect(docOf(r.files[patch]!)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'render-worker', annotations: { 'example.com/why': 'incident 42' } },
      spec: {
        template: { spec: { containers: [{ name: 'render', env: [{ name: 'RENDER_QUALITY', value: 'high' }] }] } },
      },
    });
    expect(docOf(r.files[cmPatch]!)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'render-worker-config' },
      data: { 'max-sessions': '16' },
    });
    expect(lineDiff(seed[DEV_KUST]!, r.files[DEV_KUST]!)).toEqual([
      '+patches:',
      '+  - path: freeze-writeback-render-worker.yaml',
      '+  - path: freeze-writeback-render-worker-config.yaml',
    ]);
  });

  it('names the new patch after the kind too when another kind of the same name has one', () => {
    const hpa = { group: 'autoscaling', kind: 'HorizontalPodAutoscaler', namespace: 'dev', name: 'render-worker' };
    const r = plan('overlays/dev', [
      change(deploy('render-worker'), 'spec.minReadySeconds', 10),
      change(hpa, 'spec.maxReplicas', 30),
    ]);
    expect(r.placements.map(placed)).toEqual([
      { file: 'overlays/dev/freeze-writeback-render-worker.yaml', how: 'new-patch' },
      { file: 'overlays/dev/freeze-writeback-render-worker-horizontalpodautoscaler.yaml', how: 'new-patch' },
    ]);
  });

  it('adds to the patch an earlier write-back left, instead of a second file', () => {
    const first = plan('overlays/dev', [change(deploy('render-worker'), 'spec.minReadySeconds', 10)]);
    const r = plan('overlays/dev', [change(deploy('render-worker'), 'spec.paused', false)], first.files);
    const patch = 'overlays/dev/freeze-writeback-render-worker.yaml';
    expect(r.placements.map(placed)).toEqual([{ file: patch, how: 'new-patch' }]);
    expect(Object.keys(r.files)).toEqual([patch]); // already listed
    expect(docOf(r.files[patch]!).spec).toEqual({ minReadySeconds: 10, paused: false });
    // and a field that patch already sets is edited there
    const again = plan('overlays/dev', [change(deploy('render-worker'), 'spec.minReadySeconds', 20)], first.files);
    expect(again.placements.map(placed)).toEqual([{ file: patch, how: 'patch' }]);
  });
});

describe('planWriteBack: fields it does not place', () => {
  const secret = { group: '', kind: 'Secret', namespace: 'dev', name: 'api-keys' };
  it.each<[string, WriteBackChange, RegExp, Record<string, string>?]>([
    ['a Secret', change(secret, 'data["api-key"]', 'c2VjcmV0'), /^Secret values are never written to Git$/],
    [
      'a generated ConfigMap (hash suffix)',
      change(configMap('env-settings-7h2m9c5t4k'), 'data.LOG_LEVEL', 'info'),
      /configMapGenerator "env-settings" in overlays\/dev\/kustomization\.yaml/,
    ],
    [
      'a generated ConfigMap (no hash)',
      change(configMap('env-settings'), 'data.LOG_LEVEL', 'info'),
      /configMapGenerator/,
    ],
    [
      'a list item by index',
      change(deploy('render-worker'), 'spec.template.spec.containers[name=render].args[0]', '--fast'),
      /addressed by index \(\[0\]\)/,
    ],
    [
      'a set item',
      change(deploy('render-worker'), 'metadata.finalizers[=example.com/x]', 'example.com/x'),
      /set items/,
    ],
    ['an unknown object', change(deploy('ghost'), 'spec.replicas', 2), /declares Deployment dev\/ghost/],
    [
      'a field kustomize labels set',
      change(deploy('render-worker'), 'metadata.labels.env', 'hotfix'),
      /set by the kustomization overlays\/dev/,
    ],
    ['status', change(deploy('render-worker'), 'status.replicas', 2), /status/],
    ['the name', change(deploy('render-worker'), 'metadata.name', 'x'), /identity/],
    [
      'a HelmRelease',
      change({ group: 'helm.toolkit.fluxcd.io', kind: 'HelmRelease', namespace: 'dev', name: 'r' }, 'spec.values.x', 1),
      /HelmRelease/,
    ],
    [
      'an object of a Helm chart directory',
      change(deploy('render-worker'), 'spec.replicas', 3),
      /Helm chart \(overlays\/dev\/Chart\.yaml\)/,
      { 'overlays/dev/Chart.yaml': 'apiVersion: v2\nname: x\nversion: 0.1.0\n' },
    ],
    [
      'a keyed list of a custom resource from a base',
      change({ group: 'example.com', kind: 'Widget', namespace: 'dev', name: 'w' }, 'spec.items[name=a].size', 3),
      /custom resource/,
      {
        'base/widget.yaml':
          'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  items:\n    - name: a\n      size: 1\n',
        'base/kustomization.yaml': `${seed['base/kustomization.yaml']}  - widget.yaml\n`,
      },
    ],
  ])('%s', (_label, c, reason, extra) => {
    const r = plan('overlays/dev', [c], extra);
    expect(r.files).toEqual({});
    const p = r.placements[0]!;
    expect(p.placed).toBe(false);
    if (p.placed) return;
    expect(p.reason).toMatch(reason);
    const snippet = parse(p.yaml.replace(/^#.*\n/, '')) as { kind: string; metadata: { name: string } };
    expect(snippet.kind).toBe(c.ref.kind);
    if (c.path !== 'metadata.name') expect(snippet.metadata.name).toBe(c.ref.name);
  });

  it('gives the YAML to paste with the live value, but never a Secret’s value', () => {
    const r = plan('overlays/dev', [
      change(configMap('env-settings-7h2m9c5t4k'), 'data.LOG_LEVEL', 'info'),
      change(secret, 'data["api-key"]', 'c2VjcmV0'),
    ]);
    const [cm, sec] = r.placements as Array<Extract<Placement, { placed: false }>>;
    expect(parse(cm!.yaml)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'env-settings-7h2m9c5t4k', namespace: 'dev' },
      data: { LOG_LEVEL: 'info' },
    });
    expect(sec!.yaml).not.toContain('c2VjcmV0');
    expect(JSON.stringify(r)).not.toContain('c2VjcmV0');
  });

  it('places the others when one change cannot be placed, and leaves no partial edit', () => {
    const r = plan('overlays/dev', [
      change(deploy('render-worker'), 'spec.template.spec.containers[name=render].args[0]', '--fast'),
      change(deploy('render-worker'), 'spec.replicas', 12),
    ]);
    expect(r.placements.map((p) => p.placed)).toEqual([false, true]);
    expect(Object.keys(r.files)).toEqual([DEV_KUST]);
  });
});

describe('planWriteBack: formatting', () => {
  it('keeps comments, blank lines and the sequence style of the kustomization', () => {
    const kust = `# dev overlay — owned by the render team
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: dev # the namespace

resources:
- ../../base # shared base

replicas:
# scaled for the demo
- name: render-worker
  count: 4 # was 2
`;
    const r = plan(
      'overlays/dev',
      [change(deploy('render-worker'), 'spec.replicas', 12), change(deploy('tts-gateway'), 'spec.replicas', 2)],
      { [DEV_KUST]: kust },
    );
    expect(r.files[DEV_KUST]).toBe(
      kust.replace('count: 4 # was 2', 'count: 12 # was 2') + '- name: tts-gateway\n  count: 2\n',
    );
  });

  it('edits the right document of a multi-document file and leaves the others byte for byte', () => {
    const svc = seed['argo/edge-gateway/service.yaml']!;
    const multi = `# the edge gateway, all in one\n${svc}---\n${seed[EDGE]}---\n# trailing doc comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: edge-flags\ndata: {a: "1"}\n`;
    const r = plan(
      'argo/edge-gateway',
      [
        change(deploy('edge-gateway', 'edge'), 'spec.replicas', 7),
        change(deploy('edge-gateway', 'edge'), 'spec.revisionHistoryLimit', 3),
      ],
      { 'argo/edge-gateway/all.yaml': multi, [EDGE]: undefined, 'argo/edge-gateway/service.yaml': undefined },
    );
    const out = r.files['argo/edge-gateway/all.yaml']!;
    expect(r.placements.map(placed)).toEqual([
      { file: 'argo/edge-gateway/all.yaml', how: 'resource' },
      { file: 'argo/edge-gateway/all.yaml', how: 'resource' },
    ]);
    expect(out.startsWith(`# the edge gateway, all in one\n${svc}---\n`)).toBe(true);
    expect(
      out.endsWith(
        '---\n# trailing doc comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: edge-flags\ndata: {a: "1"}\n',
      ),
    ).toBe(true);
    expect(docOf(out, 1)).toMatchObject({ spec: { replicas: 7, revisionHistoryLimit: 3 } });
  });

  it('keeps the quoting style of a scalar and the type of the value', () => {
    const cm =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  a: \'x\' # single\n  b: "8"\n  c: plain\n';
    const r = plan(
      'apps/flags',
      [
        change(configMap('flags', 'ops'), 'data.a', "it's"),
        change(configMap('flags', 'ops'), 'data.b', '16'),
        change(configMap('flags', 'ops'), 'data.c', '42'),
      ],
      { 'apps/flags/cm.yaml': cm },
    );
    expect(r.files['apps/flags/cm.yaml']).toBe(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  a: \'it\'\'s\' # single\n  b: "16"\n  c: "42"\n',
    );
  });
});
