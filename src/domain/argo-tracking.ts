// What Argo CD adds to every object it applies, so that the console's desired state is what Argo CD applies and an
// app Argo CD reports Synced has no pending field in the diff: its resource tracking (argocd-cm
// `application.resourceTrackingMethod`: annotation — the 3.x default —, label, or annotation+label), the instance
// label key (`application.instanceLabelKey`) and the installation id (`installationID`).
// As Argo CD 3.6 writes them (util/argo/resource_tracking.go SetAppInstance):
//   annotation argocd.argoproj.io/tracking-id: <app>:<group>/<kind>:<namespace>/<name>
//     (<namespace>: the object's, or the Application's destination namespace for one without, cluster-scoped too)
//   annotation argocd.argoproj.io/installation-id: <installationID>   (only when one is configured)
//   label <instanceLabelKey>: <app>   (label methods; truncated to 63 characters with annotation+label)
// <app> is the Application's name, `<namespace>_<name>` when it lives outside Argo CD's own namespace.
import type { Obj } from './object-meta.ts';

export type ArgoTrackingMethod = 'annotation' | 'label' | 'annotation+label';

export interface ArgoTrackingSettings {
  method: ArgoTrackingMethod;
  instanceLabelKey: string;
  installationID?: string;
}

export const ARGO_TRACKING_ID = 'argocd.argoproj.io/tracking-id';
export const ARGO_INSTALLATION_ID = 'argocd.argoproj.io/installation-id';
export const ARGO_DEFAULT_INSTANCE_LABEL = 'app.kubernetes.io/instance';

/** Argo CD's defaults: what it does with no argocd-cm, or keys left out of it. */
export const ARGO_DEFAULT_TRACKING: ArgoTrackingSettings = {
  method: 'annotation',
  instanceLabelKey: ARGO_DEFAULT_INSTANCE_LABEL,
};

/** The tracking settings from argocd-cm's data; an unknown method is Argo CD's default (annotation), as it treats it. */
export function argoTrackingSettings(data: Record<string, unknown> | undefined): ArgoTrackingSettings {
  const s = (k: string) => (typeof data?.[k] === 'string' ? (data[k] as string).trim() : '');
  const m = s('application.resourceTrackingMethod');
  const method: ArgoTrackingMethod = m === 'label' || m === 'annotation+label' ? m : 'annotation';
  const installationID = s('installationID');
  return {
    method,
    instanceLabelKey: s('application.instanceLabelKey') || ARGO_DEFAULT_INSTANCE_LABEL,
    ...(installationID ? { installationID } : {}),
  };
}

/** The app name Argo CD tracks by: the Application's name, or `<namespace>_<name>` outside its control plane's. */
export function argoInstanceName(app: { name: string; namespace: string }, controlPlaneNamespace = 'argocd'): string {
  return !app.namespace || app.namespace === controlPlaneNamespace ? app.name : `${app.namespace}_${app.name}`;
}

const groupOf = (apiVersion: unknown): string => {
  const v = typeof apiVersion === 'string' ? apiVersion : '';
  return v.includes('/') ? v.slice(0, v.indexOf('/')) : '';
};

/** A label value as Argo CD truncates it: 63 characters, without a trailing character a label cannot end with. */
export function truncateArgoLabel(v: string): string {
  if (v.length <= 63) return v;
  let out = v.slice(0, 63);
  while (out.length > 1 && !/[a-zA-Z0-9]$/.test(out)) out = out.slice(0, -1);
  return out;
}

/** The object as Argo CD applies it for `instance` (see the header): its tracking metadata added. */
export function withArgoTracking(
  o: Obj,
  instance: string,
  destinationNamespace: string | undefined,
  settings: ArgoTrackingSettings = ARGO_DEFAULT_TRACKING,
): Obj {
  const md = (o.metadata ?? {}) as { name?: string; namespace?: string; labels?: Record<string, string> } & {
    annotations?: Record<string, string>;
  };
  const labels = { ...(md.labels ?? {}) };
  const annotations = { ...(md.annotations ?? {}) };
  if (settings.method !== 'label') {
    const ns = md.namespace || destinationNamespace || '';
    annotations[ARGO_TRACKING_ID] =
      `${instance}:${groupOf(o.apiVersion)}/${String(o.kind ?? '')}:${ns}/${md.name ?? ''}`;
    if (settings.installationID) annotations[ARGO_INSTALLATION_ID] = settings.installationID;
    else delete annotations[ARGO_INSTALLATION_ID];
  }
  if (settings.method === 'label') labels[settings.instanceLabelKey] = instance;
  if (settings.method === 'annotation+label') labels[settings.instanceLabelKey] = truncateArgoLabel(instance);
  const metadata: Record<string, unknown> = { ...md };
  if (Object.keys(labels).length) metadata.labels = labels;
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  return { ...o, metadata };
}
