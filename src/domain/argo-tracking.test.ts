import { describe, expect, it } from 'vitest';
import {
  ARGO_DEFAULT_TRACKING,
  argoInstanceName,
  argoTrackingSettings,
  truncateArgoLabel,
  withArgoTracking,
} from './argo-tracking.ts';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'edge-gateway', namespace: 'staging', labels: { app: 'edge' } },
  spec: { replicas: 2 },
};

describe('Argo CD tracking metadata', () => {
  it('annotation tracking (the 3.x default): <app>:<group>/<kind>:<namespace>/<name>, labels untouched', () => {
    const o = withArgoTracking(deployment, 'edge-gateway-staging', 'staging');
    expect(o.metadata).toEqual({
      name: 'edge-gateway',
      namespace: 'staging',
      labels: { app: 'edge' },
      annotations: { 'argocd.argoproj.io/tracking-id': 'edge-gateway-staging:apps/Deployment:staging/edge-gateway' },
    });
    // the input is not changed
    expect(deployment.metadata).not.toHaveProperty('annotations');
  });

  it('a core object has an empty group; one without a namespace takes the destination namespace, as Argo CD does', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
    expect((withArgoTracking(cm, 'a', 'dev').metadata as Record<string, unknown>).annotations).toEqual({
      'argocd.argoproj.io/tracking-id': 'a:/ConfigMap:dev/c',
    });
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } };
    expect((withArgoTracking(ns, 'a', undefined).metadata as Record<string, unknown>).annotations).toEqual({
      'argocd.argoproj.io/tracking-id': 'a:/Namespace:/x',
    });
  });

  it('label and annotation+label methods, the instance label key and the installation id from argocd-cm', () => {
    const label = argoTrackingSettings({
      'application.resourceTrackingMethod': 'label',
      'application.instanceLabelKey': 'argocd.argoproj.io/instance',
    });
    const l = withArgoTracking(deployment, 'edge', 'staging', label).metadata as Record<string, unknown>;
    expect(l.labels).toEqual({ app: 'edge', 'argocd.argoproj.io/instance': 'edge' });
    expect(l).not.toHaveProperty('annotations');

    const both = argoTrackingSettings({
      'application.resourceTrackingMethod': 'annotation+label',
      installationID: 'i-1',
    });
    const long = `${'a'.repeat(62)}-b`;
    const b = withArgoTracking(deployment, long, 'staging', both).metadata as Record<string, unknown>;
    expect(b.labels).toEqual({ app: 'edge', 'app.kubernetes.io/instance': 'a'.repeat(62) });
    expect(b.annotations).toEqual({
      'argocd.argoproj.io/tracking-id': `${long}:apps/Deployment:staging/edge-gateway`,
      'argocd.argoproj.io/installation-id': 'i-1',
    });
  });

  it('no argocd-cm, or an unknown method: Argo CD’s default (annotation)', () => {
    expect(argoTrackingSettings(undefined)).toEqual(ARGO_DEFAULT_TRACKING);
    expect(argoTrackingSettings({ 'application.resourceTrackingMethod': 'weird' }).method).toBe('annotation');
  });

  it('an Application outside Argo CD’s namespace is tracked as <namespace>_<name>', () => {
    expect(argoInstanceName({ name: 'a', namespace: 'argocd' })).toBe('a');
    expect(argoInstanceName({ name: 'a', namespace: 'team-x' })).toBe('team-x_a');
  });

  it('label truncation drops trailing characters a label value cannot end with', () => {
    expect(truncateArgoLabel('short')).toBe('short');
    expect(truncateArgoLabel(`${'x'.repeat(61)}--yy`)).toBe('x'.repeat(61));
  });
});
