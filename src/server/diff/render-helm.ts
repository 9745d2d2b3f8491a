// A Flux HelmRelease rendered as helm-controller installs it (issue 26, part 4): the chart from its source
// artifact (the HelmChart source-controller made for chart.spec, or the chartRef's OCIRepository), the values
// merged as helm-controller merges them (valuesFrom in order, then spec.values), `helm template` with the
// release's name and namespace, then helm-controller's post-render: commonMetadata and its origin labels.
// What the console cannot reproduce is an error, never a guess: values from a Secret (the console does not read
// Secrets) and kustomize post-renderers.
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  downloadArtifact,
  maskedRenderError,
  parseRendered,
  renderHash,
  RenderError,
  run,
  secretsInYaml,
  toolVersion,
  withDefaultNamespace,
  type Obj,
  type RenderResult,
  type RenderTools,
} from './render.ts';

const isMap = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** Helm's map merge (chartutil.MergeMaps): maps merge key by key, anything else is replaced. */
export function mergeValues(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isMap(v) && isMap(out[k]) ? mergeValues(out[k], v) : v;
  return out;
}

/** A `targetPath` value as Helm's strvals parses `path=value`: true/false, null and integers typed, else a string. */
function typed(v: string): unknown {
  if (v === 'true' || v === 'false') return v === 'true';
  if (v === 'null') return null;
  if (/^-?(0|[1-9]\d{0,17})$/.test(v)) return Number(v);
  return v;
}

function setPath(values: Obj, path: string, value: unknown): Obj {
  const keys = path.split('.').filter(Boolean);
  if (!keys.length) throw new RenderError(`valuesFrom targetPath "${path}" is empty`, 'render');
  const root: Obj = { ...values };
  let at = root;
  keys.forEach((k, i) => {
    if (i === keys.length - 1) at[k] = value;
    else at = at[k] = isMap(at[k]) ? { ...at[k] } : {};
  });
  return root;
}

interface ValuesReference {
  kind?: string;
  name?: string;
  valuesKey?: string;
  targetPath?: string;
  optional?: boolean;
}

/**
 * The release's values as helm-controller composes them: each `valuesFrom` ConfigMap in order (its `valuesKey`,
 * default values.yaml, merged; or one value at `targetPath`), then `spec.values` on top. Throws RenderError for a
 * Secret reference and for a required ConfigMap or key that is missing.
 */
export function composeHelmValues(hr: Obj, configMap: (namespace: string, name: string) => Obj | undefined): Obj {
  const spec = (hr.spec ?? {}) as Obj;
  const ns = String(((hr.metadata ?? {}) as Obj).namespace ?? 'default');
  let values: Obj = {};
  for (const ref of (Array.isArray(spec.valuesFrom) ? spec.valuesFrom : []) as ValuesReference[]) {
    const key = ref.valuesKey ?? 'values.yaml';
    if (ref.kind === 'Secret')
      throw new RenderError(
        `valuesFrom Secret/${ref.name ?? '?'}: the console does not read Secrets, so this release's values cannot be reproduced`,
        'render',
      );
    const cm = ref.name ? configMap(ns, ref.name) : undefined;
    const text = (cm?.data as Record<string, string> | undefined)?.[key];
    if (text === undefined) {
      if (ref.optional) continue;
      throw new RenderError(
        cm
          ? `valuesFrom ConfigMap/${ref.name}: no key ${key}`
          : `valuesFrom ConfigMap/${ref.name ?? '?'} not found (or not readable by the console)`,
        'render',
      );
    }
    if (ref.targetPath) {
      values = setPath(values, ref.targetPath, typed(text.trim()));
      continue;
    }
    let parsed: unknown;
    try {
      parsed = parseYaml(text, { maxAliasCount: 100 });
    } catch (e) {
      throw new RenderError(
        `valuesFrom ConfigMap/${ref.name}[${key}] is not YAML: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`,
        'render',
      );
    }
    if (parsed !== null && parsed !== undefined && !isMap(parsed))
      throw new RenderError(`valuesFrom ConfigMap/${ref.name}[${key}] is not a map of values`, 'render');
    values = mergeValues(values, parsed ?? {});
  }
  return isMap(spec.values) ? mergeValues(values, spec.values) : values;
}

/** helm-controller's release name: spec.releaseName, else `<targetNamespace>-<name>` with a target, else the name. */
export function helmReleaseName(hr: Obj): string {
  const spec = (hr.spec ?? {}) as Obj;
  const name = String(((hr.metadata ?? {}) as Obj).name ?? 'release');
  if (typeof spec.releaseName === 'string' && spec.releaseName) return spec.releaseName;
  return typeof spec.targetNamespace === 'string' && spec.targetNamespace ? `${spec.targetNamespace}-${name}` : name;
}

/**
 * What an installed object carries beyond `helm template`'s output: helm-controller's post-render without kustomize
 * (spec.commonMetadata, then its origin labels, which win) and Helm's release ownership metadata (the
 * `managed-by: Helm` label and the `meta.helm.sh/release-name|namespace` annotations it writes on install).
 */
export function withHelmControllerMetadata(o: Obj, hr: Obj): Obj {
  const hmd = (hr.metadata ?? {}) as Obj;
  const releaseNs = String((hr.spec as Obj | undefined)?.targetNamespace ?? hmd.namespace ?? 'default');
  const common = ((hr.spec as Obj | undefined)?.commonMetadata ?? {}) as {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  const md = (o.metadata ?? {}) as { labels?: Record<string, string>; annotations?: Record<string, string> };
  const annotations = {
    ...(md.annotations ?? {}),
    ...(common.annotations ?? {}),
    'meta.helm.sh/release-name': helmReleaseName(hr),
    'meta.helm.sh/release-namespace': releaseNs,
  };
  return {
    ...o,
    metadata: {
      ...md,
      labels: {
        ...(md.labels ?? {}),
        ...(common.labels ?? {}),
        'app.kubernetes.io/managed-by': 'Helm',
        'helm.toolkit.fluxcd.io/name': String(hmd.name ?? ''),
        'helm.toolkit.fluxcd.io/namespace': String(hmd.namespace ?? ''),
      },
      annotations,
    },
  };
}

/** The chart directory in an extracted chart artifact (a .tgz holds one top-level directory with Chart.yaml). */
function chartDir(root: string): string {
  if (existsSync(join(root, 'Chart.yaml'))) return root;
  for (const e of readdirSync(root)) {
    const d = join(root, e);
    if (statSync(d).isDirectory() && existsSync(join(d, 'Chart.yaml'))) return d;
  }
  throw new RenderError('the chart artifact holds no Chart.yaml', 'source');
}

/**
 * Renders a HelmRelease whose spec.values already hold the composed values (composeHelmValues), from its chart
 * source object's artifact. Hooks are left out (Helm keeps them out of the release's objects).
 */
export async function renderHelmRelease(hr: Obj, chart: Obj | undefined, tools: RenderTools): Promise<RenderResult> {
  const spec = (hr.spec ?? {}) as Obj;
  const artifact = ((chart?.status as Obj | undefined)?.artifact ?? {}) as {
    url?: string;
    digest?: string;
    revision?: string;
  };
  let text: string | undefined;
  let work: string | undefined;
  try {
    if (Array.isArray(spec.postRenderers) && spec.postRenderers.length)
      throw new RenderError(
        "the console does not apply a HelmRelease's kustomize post-renderers yet, so this render cannot be reproduced",
        'render',
      );
    if (!tools.helm) throw new RenderError('no helm binary is configured (CONSOLE_HELM)', 'render');
    if (!chart) throw new RenderError("the chart's source object is not found", 'source');
    if (!artifact.url) throw new RenderError('the chart has no artifact yet', 'source');
    // helm-controller copies chart.spec.version into its HelmChart when it reconciles: until then (suspended, or not
    // yet) the artifact is another version's, and a render of it would be a guess
    const wanted = (((spec.chart as Obj | undefined)?.spec as Obj | undefined)?.version ?? undefined) as
      string | undefined;
    const has = ((chart.spec as Obj | undefined)?.version ?? undefined) as string | undefined;
    if (chart.kind === 'HelmChart' && wanted !== undefined && has !== undefined && wanted !== has)
      throw new RenderError(
        `the HelmChart still asks for version ${has}: helm-controller has not fetched ${wanted} yet (is the release suspended?)`,
        'source',
      );
    const root = await downloadArtifact(artifact.url, artifact.digest, tools);
    work = mkdtempSync(join(tmpdir(), 'helm-render-'));
    cpSync(root, join(work, 'chart'), { recursive: true });
    const dir = chartDir(join(work, 'chart'));
    const valuesFile = join(work, 'values.json');
    writeFileSync(valuesFile, JSON.stringify(spec.values ?? {}), { mode: 0o600 });
    const namespace = String(spec.targetNamespace ?? ((hr.metadata ?? {}) as Obj).namespace ?? 'default');
    const crds = ((spec.install ?? {}) as Obj).crds;
    text = await run(
      tools.helm,
      [
        'template',
        helmReleaseName(hr),
        dir,
        '--namespace',
        namespace,
        '--values',
        valuesFile,
        ...(crds === 'Skip' ? [] : ['--include-crds']),
      ],
      { timeoutMs: tools.timeoutMs ?? 30_000, maxBytes: tools.maxOutputBytes ?? 64 << 20 },
    );
    const objects = withDefaultNamespace(parseRendered(text), namespace)
      .filter((o) => !((o.metadata as Obj | undefined)?.annotations as Obj | undefined)?.['helm.sh/hook'])
      .map((o) => withHelmControllerMetadata(o, hr));
    return {
      objects,
      renderer: `helm ${await toolVersion(tools.helm, ['version', '--short'])} (template, as helm-controller)`,
      revision: artifact.revision ?? '',
      ...(artifact.digest ? { artifactDigest: artifact.digest } : {}),
      renderHash: renderHash(objects),
      secretsInGit: [],
    };
  } catch (e) {
    const output = text;
    throw maskedRenderError(e, () => (output ? secretsInYaml(output) : []));
  } finally {
    if (work) rmSync(work, { recursive: true, force: true });
  }
}
