// Renders cached by what determines them (renderInput in app-diff.ts), so a diff refetched on every live
// change does not render again while Git and the app's spec stay put.
//   Flux: the source artifact (digest and revision; the URL only when there is no digest) and the
//         Kustomization's name, namespace and spec with its substituteFrom ConfigMap values merged in (what
//         flux-render is given; its status and resourceVersion are not part of it, nor the spec fields that
//         only steer when and how kustomize-controller applies: suspending an app does not render it again).
//   Argo CD: repoURL, the revision the controller applied (only an immutable commit sha is cached: a branch or
//         tag name can move), path, destination namespace and the Helm options.
// Plus the renderer binaries. Bounded: LRU over entries and over the rendered objects they hold. Failures are
// not cached (the next diff tries again), and concurrent renders of one key share one run.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../domain/evidence.ts';
import { renderFrom, type RenderInput } from './desired.ts';
import { Lru } from './lru.ts';
import type { Obj, RenderResult, RenderTools } from './render.ts';

export interface RenderCacheOptions {
  /** renders kept (default 64) */
  maxEntries?: number;
  /** rendered objects kept across all renders (default 50,000, about 1 KiB to a few KiB each in memory) */
  maxObjects?: number;
  render?: (input: RenderInput, tools: RenderTools) => Promise<RenderResult>;
}

export interface RenderCacheStats {
  /** renders run (misses, failures included) */
  renders: number;
  hits: number;
  entries: number;
  objects: number;
}

const IMMUTABLE_REVISION = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

/** Kustomization spec fields the build never reads (scheduling and apply options); any other field is in the key. */
const NOT_RENDERED = [
  'suspend',
  'interval',
  'retryInterval',
  'timeout',
  'prune',
  'wait',
  'force',
  'healthChecks',
  'healthCheckExprs',
  'dependsOn',
  'deletionPolicy',
  'serviceAccountName',
  'kubeConfig',
];

/** The cache key of a render input, or undefined when the input does not pin its content (never cached). */
export function renderKey(input: RenderInput, tools: RenderTools): string | undefined {
  const bins = { fluxRender: tools.fluxRender, kustomize: tools.kustomize, helm: tools.helm ?? null };
  let what: unknown;
  if (input.controller === 'flux') {
    const artifact = ((input.source?.status as Obj | undefined)?.artifact ?? {}) as {
      url?: string;
      digest?: string;
      revision?: string;
    };
    if (!artifact.url) return undefined;
    const ks = input.kustomization;
    const md = (ks.metadata ?? {}) as { name?: string; namespace?: string };
    what = {
      controller: 'flux',
      artifact: artifact.digest
        ? { digest: artifact.digest, revision: artifact.revision ?? '' }
        : { url: artifact.url, revision: artifact.revision ?? '' },
      kustomization: {
        apiVersion: ks.apiVersion,
        kind: ks.kind,
        name: md.name,
        namespace: md.namespace,
        spec: Object.fromEntries(Object.entries((ks.spec ?? {}) as Obj).filter(([k]) => !NOT_RENDERED.includes(k))),
      },
    };
  } else if (input.controller === 'flux-helm') {
    // the chart by its artifact's digest, the release's spec (values composed) and its identity
    const artifact = ((input.chart?.status as Obj | undefined)?.artifact ?? {}) as { digest?: string; url?: string };
    if (!artifact.digest) return undefined;
    const hr = input.helmRelease;
    const md = (hr.metadata ?? {}) as { name?: string; namespace?: string };
    what = {
      controller: 'flux-helm',
      chart: artifact.digest,
      helmRelease: {
        name: md.name,
        namespace: md.namespace,
        spec: Object.fromEntries(Object.entries((hr.spec ?? {}) as Obj).filter(([k]) => !NOT_RENDERED.includes(k))),
      },
    };
  } else {
    if (!IMMUTABLE_REVISION.test(input.revision)) return undefined;
    what = input;
  }
  return createHash('sha256').update(canonicalJson({ bins, what })).digest('hex');
}

export class RenderCache {
  private readonly lru: Lru<string, RenderResult>;
  private readonly inFlight = new Map<string, Promise<RenderResult>>();
  private readonly run: (input: RenderInput, tools: RenderTools) => Promise<RenderResult>;
  private counts = { renders: 0, hits: 0 };

  constructor(opts: RenderCacheOptions = {}) {
    this.lru = new Lru<string, RenderResult>({
      maxEntries: opts.maxEntries ?? 64,
      maxWeight: opts.maxObjects ?? 50_000,
      weigh: (r) => Math.max(1, r.objects.length),
    });
    this.run = opts.render ?? renderFrom;
  }

  /** The render of `input`, from the cache when its key is known; `cached` says whether it rendered now. */
  async render(input: RenderInput, tools: RenderTools): Promise<{ result: RenderResult; cached: boolean }> {
    const key = renderKey(input, tools);
    if (key === undefined) {
      this.counts.renders++;
      return { result: await this.run(input, tools), cached: false };
    }
    const hit = this.lru.get(key);
    if (hit) {
      this.counts.hits++;
      return { result: hit, cached: true };
    }
    const running = this.inFlight.get(key);
    if (running) {
      this.counts.hits++;
      return { result: await running, cached: true };
    }
    this.counts.renders++;
    const p = this.run(input, tools)
      .then((r) => {
        this.lru.set(key, r);
        return r;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, p);
    return { result: await p, cached: false };
  }

  stats(): RenderCacheStats {
    return { ...this.counts, entries: this.lru.size, objects: this.lru.weight };
  }
}
