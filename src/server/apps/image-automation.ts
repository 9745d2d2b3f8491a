// The image automation of a Flux app from the console's informers (issue 26 part 5; the rules are in
// domain/image-automation.ts). A kind the console could not read makes the answer unknown, never "none"; a
// cluster without the image CRDs has none.
import type { App } from '../../domain/app.ts';
import { imageAutomationOf, type ImageAutomationView } from '../../domain/image-automation.ts';
import type { ClusterManager } from '../kube/cluster-manager.ts';
import { KINDS } from '../kube/kinds.ts';

const IMAGE_KINDS = [KINDS.ImageUpdateAutomation, KINDS.ImagePolicy, KINDS.ImageRepository, KINDS.GitRepository];

/** undefined: not a Flux Kustomization (nothing to show); otherwise the view, `unknown` when it cannot be read. */
export function imageAutomationFor(clusters: ClusterManager, app: App): ImageAutomationView | undefined {
  if (app.controller !== 'flux' || app.kind !== 'Kustomization') return undefined;
  const empty = { automations: [], policies: [], repositories: [] };
  const mc = clusters.clusters.get(app.cluster);
  if (!mc) return { status: 'unknown', why: `cluster ${app.cluster} is not connected`, ...empty };
  const states = IMAGE_KINDS.map((k) => ({ k, st: mc.state.kinds[`${k.group}/${k.kind}`] }));
  const unread = states.find(({ st }) => !st || !st.synced || st.error);
  if (unread)
    return {
      status: 'unknown',
      why: `${unread.k.plural} on ${app.cluster} are not read yet${unread.st?.error ? `: ${unread.st.error}` : ''}`,
      ...empty,
    };
  if (states.slice(0, 3).every(({ st }) => st?.absent))
    return { status: 'ok', why: `Flux image automation is not installed on ${app.cluster}`, ...empty };
  const view = imageAutomationOf(
    { sourceUrl: app.source.url, path: app.source.path },
    {
      automations: mc.list(KINDS.ImageUpdateAutomation) as Array<Record<string, unknown>>,
      policies: mc.list(KINDS.ImagePolicy) as Array<Record<string, unknown>>,
      repositories: mc.list(KINDS.ImageRepository) as Array<Record<string, unknown>>,
      gitRepository: (ns, name) => mc.get(KINDS.GitRepository, ns, name) as Record<string, unknown> | undefined,
    },
  );
  return { status: 'ok', ...view };
}
