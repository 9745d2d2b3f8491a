// The write-back edits only the app's own directory (issue 22): a value set in a file outside it — a resource
// or a patch that the dev and prod overlays both list — is written into the prod overlay instead, and the
// result rendered with the sandbox's real kustomize (as Flux builds: files outside the overlay allowed) gives
// prod the live value and leaves dev byte for byte as it was.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { SEED_IMAGE_HOST, seedFiles } from '../../sandbox/seed.ts';
import { bin } from '../../sandbox/state.ts';
import { planWriteBack, type WriteBackChange, type WriteBackPlan } from './writeback.ts';

type Obj = Record<string, unknown>;
const KUSTOMIZE = bin('kustomize');
const hasKustomize = existsSync(KUSTOMIZE);
// a render spawns kustomize: seconds, not milliseconds, on a loaded machine (npm test runs this beside the sandbox)
const RENDER_TIMEOUT_MS = 60_000;
if (!hasKustomize) console.warn(`writeback-scope: ${KUSTOMIZE} is absent (build the sandbox once); skipping renders`);

const IMG = `${SEED_IMAGE_HOST}/digital-human`;
const PROD = 'overlays/prod';
const PROD_KUST = `${PROD}/kustomization.yaml`;
const deploy = (name: string) => ({ group: 'apps', kind: 'Deployment', namespace: 'prod', name });
const configMap = (name: string) => ({ group: '', kind: 'ConfigMap', namespace: 'prod', name });
const change = (ref: WriteBackChange['ref'], path: string, liveValue: unknown): WriteBackChange => ({
  id: `${ref.kind}/${ref.name}/${path}`,
  ref,
  path,
  liveValue,
});
const env = (name: string) => `spec.template.spec.containers[name=render].env[name=${name}].value`;

const SHARED_CM = `apiVersion: v1
kind: ConfigMap
metadata:
  name: feature-flags
data:
  mode: normal
  banner: "off"
`;
const COMMON_PATCH = `apiVersion: apps/v1
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
              value: reduced
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: session-cache
spec:
  template:
    spec:
      containers:
        - name: session
          image: ${IMG}/session-cache:7.3
`;
const COMMON_JSON6902 = `- op: replace
  path: /data/codec
  value: vp9
`;

/**
 * The seed with extra files, and the dev and prod kustomizations both given the same extra lines (a shared
 * resource under `resources:`, patch lists); `prodTail` lines go into prod's only, before the shared `tail`.
 */
function repo(opts: {
  files?: Record<string, string>;
  resources?: string[];
  tail?: string;
  prodTail?: string;
}): Record<string, string> {
  const files: Record<string, string> = { ...seedFiles(), ...opts.files };
  for (const overlay of ['dev', 'prod']) {
    const k = `overlays/${overlay}/kustomization.yaml`;
    let text = files[k]!.replace(
      'resources:\n  - ../../base\n',
      `resources:\n  - ../../base\n${(opts.resources ?? []).map((r) => `  - ${r}\n`).join('')}`,
    );
    if (overlay === 'prod' && opts.prodTail) text += opts.prodTail;
    if (opts.tail) text += opts.tail;
    files[k] = text;
  }
  return files;
}

function planProd(files: Record<string, string>, changes: WriteBackChange[]): WriteBackPlan {
  const plan = planWriteBack({ appPath: `./${PROD}/`, files, changes });
  // the rule itself: no file outside the prod overlay is edited
  expect(Object.keys(plan.files).filter((f) => !f.startsWith(`${PROD}/`))).toEqual([]);
  return plan;
}

const tmpDirs: string[] = [];
afterAll(() => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

/** `kustomize build` of each overlay as Flux's kustomize-controller runs it (files outside the overlay allowed). */
function render(files: Record<string, string>): Record<'dev' | 'prod', { text: string; objects: Obj[] }> {
  const root = mkdtempSync(join(tmpdir(), 'writeback-scope-'));
  tmpDirs.push(root);
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), c);
  }
  const build = (overlay: string) => {
    const text = execFileSync(
      KUSTOMIZE,
      ['build', '--load-restrictor', 'LoadRestrictionsNone', join(root, 'overlays', overlay)],
      { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    return { text, objects: parseAllDocuments(text).map((d) => d.toJS() as Obj) };
  };
  return { dev: build('dev'), prod: build('prod') };
}

const find = (objects: Obj[], kind: string, name: string): Obj & { spec: Obj; data?: Obj } => {
  const o = objects.find((x) => x.kind === kind && (x.metadata as Obj).name === name);
  if (!o) throw new Error(`${kind} ${name} is not in the render`);
  return o as Obj & { spec: Obj; data?: Obj };
};
const container = (o: Obj) => (o.spec as { template: { spec: { containers: Obj[] } } }).template.spec.containers[0]!;
const envValue = (o: Obj, name: string) =>
  (container(o).env as Array<{ name: string; value: string }>).find((e) => e.name === name)?.value;

/** Renders before and after: dev is unchanged byte for byte; prod changed only in the objects named. */
function renderBoth(before: Record<string, string>, plan: WriteBackPlan, changedInProd: Array<[string, string]>) {
  const was = render(before);
  const now = render({ ...before, ...plan.files });
  expect(now.dev.text).toBe(was.dev.text);
  const others = (objs: Obj[]) =>
    objs.filter((o) => !changedInProd.some(([k, n]) => o.kind === k && (o.metadata as Obj).name === n));
  expect(others(now.prod.objects)).toEqual(others(was.prod.objects));
  return { was, now };
}

describe('planWriteBack: only the app’s own directory is edited', () => {
  it('a ConfigMap in ../shared/cm.yaml that dev and prod both list: a new patch in prod', () => {
    const files = repo({ files: { 'overlays/shared/cm.yaml': SHARED_CM }, resources: ['../shared/cm.yaml'] });
    const plan = planProd(files, [change(configMap('feature-flags'), 'data.mode', 'degraded')]);
    expect(plan.placements).toEqual([
      {
        changeId: 'ConfigMap/feature-flags/data.mode',
        placed: true,
        file: `${PROD}/freeze-writeback-feature-flags.yaml`,
        how: 'new-patch',
        note: `set in ../shared/cm.yaml, outside ${PROD} and possibly shared with other overlays: written as a new patch in ${PROD}`,
      },
    ]);
    expect(Object.keys(plan.files)).toEqual([`${PROD}/freeze-writeback-feature-flags.yaml`, PROD_KUST]);
    expect(plan.files[PROD_KUST]).toBe(`${files[PROD_KUST]}patches:\n  - path: freeze-writeback-feature-flags.yaml\n`);
  });

  it.skipIf(!hasKustomize)(
    '… rendered: prod has the live value, dev is unchanged',
    () => {
      const files = repo({ files: { 'overlays/shared/cm.yaml': SHARED_CM }, resources: ['../shared/cm.yaml'] });
      const plan = planProd(files, [change(configMap('feature-flags'), 'data.mode', 'degraded')]);
      const { now } = renderBoth(files, plan, [['ConfigMap', 'feature-flags']]);
      expect(find(now.prod.objects, 'ConfigMap', 'feature-flags').data).toEqual({ mode: 'degraded', banner: 'off' });
      expect(find(now.dev.objects, 'ConfigMap', 'feature-flags').data).toEqual({ mode: 'normal', banner: 'off' });
    },
    RENDER_TIMEOUT_MS,
  );

  it('a patch at ../common/p.yaml that dev and prod both list: a new patch after it, or an images: entry', () => {
    const files = repo({
      files: { 'overlays/common/p.yaml': COMMON_PATCH },
      tail: 'patches:\n  - path: ../common/p.yaml\n',
    });
    const plan = planProd(files, [
      change(deploy('render-worker'), env('RENDER_QUALITY'), 'low'),
      change(deploy('session-cache'), 'spec.template.spec.containers[name=session].image', `${IMG}/session-cache:7.4`),
    ]);
    const note = (as: string) =>
      `set in ../common/p.yaml, outside ${PROD} and possibly shared with other overlays: written as ${as}`;
    expect(plan.placements.map((p) => (p.placed ? [p.file, p.how, p.note] : p.reason))).toEqual([
      [`${PROD}/freeze-writeback-render-worker.yaml`, 'new-patch', note(`a new patch in ${PROD}`)],
      [PROD_KUST, 'kustomize-images', note(`a new images: entry in ${PROD_KUST}`)],
    ]);
    const kust = parseAllDocuments(plan.files[PROD_KUST]!)[0]!.toJS() as Obj;
    // listed after the shared patch, so kustomize applies it last
    expect(kust.patches).toEqual([{ path: '../common/p.yaml' }, { path: 'freeze-writeback-render-worker.yaml' }]);
    expect((kust.images as Obj[]).at(-1)).toEqual({ name: `${IMG}/session-cache`, newTag: '7.4' });
  });

  it.skipIf(!hasKustomize)(
    '… rendered: prod has the live values, dev keeps the shared patch’s',
    () => {
      const files = repo({
        files: { 'overlays/common/p.yaml': COMMON_PATCH },
        tail: 'patches:\n  - path: ../common/p.yaml\n',
      });
      const plan = planProd(files, [
        change(deploy('render-worker'), env('RENDER_QUALITY'), 'low'),
        change(
          deploy('session-cache'),
          'spec.template.spec.containers[name=session].image',
          `${IMG}/session-cache:7.4`,
        ),
      ]);
      const { now } = renderBoth(files, plan, [
        ['Deployment', 'render-worker'],
        ['Deployment', 'session-cache'],
      ]);
      expect(envValue(find(now.prod.objects, 'Deployment', 'render-worker'), 'RENDER_QUALITY')).toBe('low');
      expect(container(find(now.prod.objects, 'Deployment', 'session-cache')).image).toBe(`${IMG}/session-cache:7.4`);
      expect(envValue(find(now.dev.objects, 'Deployment', 'render-worker'), 'RENDER_QUALITY')).toBe('reduced');
      expect(container(find(now.dev.objects, 'Deployment', 'session-cache')).image).toBe(`${IMG}/session-cache:7.3`);
    },
    RENDER_TIMEOUT_MS,
  );

  const json6902 = () =>
    repo({
      files: { 'overlays/common/codec.yaml': COMMON_JSON6902 },
      tail: 'patchesJson6902:\n  - target:\n      version: v1\n      kind: ConfigMap\n      name: render-worker-config\n    path: ../common/codec.yaml\n',
    });

  it('a shared JSON 6902 patch (applied after every other patch): a JSON 6902 entry after it in prod', () => {
    const plan = planProd(json6902(), [change(configMap('render-worker-config'), 'data.codec', 'av1')]);
    expect(plan.placements.map((p) => (p.placed ? [p.file, p.how] : p.reason))).toEqual([[PROD_KUST, 'new-patch']]);
    expect(Object.keys(plan.files)).toEqual([PROD_KUST]);
  });

  it.skipIf(!hasKustomize)(
    '… rendered: prod has the live value, dev keeps the shared patch’s',
    () => {
      const files = json6902();
      const plan = planProd(files, [change(configMap('render-worker-config'), 'data.codec', 'av1')]);
      const { now } = renderBoth(files, plan, [['ConfigMap', 'render-worker-config']]);
      expect(find(now.prod.objects, 'ConfigMap', 'render-worker-config').data).toEqual({
        codec: 'av1',
        'max-sessions': '8',
      });
      expect(find(now.dev.objects, 'ConfigMap', 'render-worker-config').data).toEqual({
        codec: 'vp9',
        'max-sessions': '8',
      });
    },
    RENDER_TIMEOUT_MS,
  );

  const ownQuality = `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: render-worker\nspec:\n  template:\n    spec:\n      containers:\n        - name: render\n          env:\n            - name: RENDER_QUALITY\n              value: medium # prod's own\n`;

  it('edits prod’s own patch when kustomize applies it after the shared one', () => {
    const files = repo({
      files: { 'overlays/common/p.yaml': COMMON_PATCH, [`${PROD}/quality.yaml`]: ownQuality },
      tail: 'patches:\n  - path: ../common/p.yaml\n',
    });
    files[PROD_KUST] += '  - path: quality.yaml\n';
    const plan = planProd(files, [change(deploy('render-worker'), env('RENDER_QUALITY'), 'low')]);
    expect(plan.placements).toEqual([
      { changeId: expect.any(String), placed: true, file: `${PROD}/quality.yaml`, how: 'patch' },
    ]);
    expect(plan.files[`${PROD}/quality.yaml`]).toBe(ownQuality.replace('value: medium #', 'value: low #'));
  });

  it.skipIf(!hasKustomize)(
    'writes a new patch when prod’s own patch is applied before the shared one',
    () => {
      const files = repo({
        files: { 'overlays/common/p.yaml': COMMON_PATCH, [`${PROD}/quality.yaml`]: ownQuality },
        prodTail: 'patches:\n  - path: quality.yaml\n',
        tail: '',
      });
      files[PROD_KUST] += '  - path: ../common/p.yaml\n';
      files['overlays/dev/kustomization.yaml'] += 'patches:\n  - path: ../common/p.yaml\n';
      const plan = planProd(files, [change(deploy('render-worker'), env('RENDER_QUALITY'), 'low')]);
      expect(plan.placements.map((p) => (p.placed ? [p.file, p.how] : p.reason))).toEqual([
        [`${PROD}/freeze-writeback-render-worker.yaml`, 'new-patch'],
      ]);
      const { now } = renderBoth(files, plan, [['Deployment', 'render-worker']]);
      expect(envValue(find(now.prod.objects, 'Deployment', 'render-worker'), 'RENDER_QUALITY')).toBe('low');
    },
    RENDER_TIMEOUT_MS,
  );

  it('refuses, editing nothing, when an earlier write-back’s patch is applied before the shared one', () => {
    const earlier = `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: render-worker\nspec:\n  replicas: 3\n`;
    const files = repo({
      files: { 'overlays/common/p.yaml': COMMON_PATCH, [`${PROD}/freeze-writeback-render-worker.yaml`]: earlier },
      prodTail: 'patches:\n  - path: freeze-writeback-render-worker.yaml\n',
    });
    files[PROD_KUST] += '  - path: ../common/p.yaml\n';
    const plan = planProd(files, [change(deploy('render-worker'), env('RENDER_QUALITY'), 'low')]);
    expect(plan.files).toEqual({});
    expect(plan.placements).toMatchObject([
      {
        placed: false,
        reason: `${PROD}/freeze-writeback-render-worker.yaml is applied before overlays/common/p.yaml, which sets the field: list it after that patch`,
      },
    ]);
  });

  it('takes a sibling directory whose name starts with the app’s (overlays/prod-shared) as outside', () => {
    const files = repo({ files: { 'overlays/prod-shared/cm.yaml': SHARED_CM }, resources: ['../prod-shared/cm.yaml'] });
    const plan = planProd(files, [change(configMap('feature-flags'), 'data.banner', 'on')]);
    expect(plan.placements).toMatchObject([
      { placed: true, how: 'new-patch', note: expect.stringMatching(/^set in \.\.\/prod-shared\/cm\.yaml, outside/) },
    ]);
  });

  it('still edits a manifest inside the app’s directory in place', () => {
    const files = repo({ files: { [`${PROD}/flags/cm.yaml`]: SHARED_CM } });
    files[PROD_KUST] = files[PROD_KUST]!.replace('  - ../../base\n', '  - ../../base\n  - flags/cm.yaml\n');
    const plan = planProd(files, [change(configMap('feature-flags'), 'data.mode', 'degraded')]);
    expect(plan.placements).toEqual([
      { changeId: expect.any(String), placed: true, file: `${PROD}/flags/cm.yaml`, how: 'resource' },
    ]);
  });
});
