import { describe, expect, it } from 'vitest';
import type { App } from './app.ts';
import { pruneHold, pruneHoldIn, pruneHoldLine } from './prune-hold.ts';

// kustomize-controller's Ready message when the policy denies its prune (shape from the sandbox)
const FLUX =
  'ConfigMap/dev/render-worker-config deletion failed: configmaps "render-worker-config" is forbidden: ' +
  "ValidatingAdmissionPolicy 'gitops-console-prune-approval' with binding 'gitops-console-prune-approval' denied " +
  'request: prune of ConfigMap/render-worker-config needs an approved prune preview in the GitOps console (uid ' +
  '0b7c… is not approved)\nService/dev/tts-gateway deletion failed: … prune of Service/tts-gateway needs an ' +
  'approved prune preview in the GitOps console (uid 9a1… is not approved)';

const flux = (status: string, message: string, reason = 'PruneFailed') =>
  ({ controller: 'flux', conditions: [{ type: 'Ready', status, reason, message }] }) as unknown as App;

describe('pruneHold', () => {
  it('reads the objects the policy holds from Flux’s Ready message', () => {
    const h = pruneHold(flux('False', FLUX));
    expect(h).toMatchObject({ objects: ['ConfigMap/render-worker-config', 'Service/tts-gateway'], count: 2 });
    expect(h?.message).not.toContain('\n');
    expect(pruneHoldLine(h as NonNullable<typeof h>)).toBe(
      'held by the prune policy: deleting ConfigMap/render-worker-config, Service/tts-gateway needs an approved prune preview',
    );
  });

  it('is no hold when Ready is True, or the failure is another one', () => {
    expect(pruneHold(flux('True', FLUX, 'ReconciliationSucceeded'))).toBeUndefined();
    expect(pruneHold(flux('False', 'kustomize build failed: accumulating resources', 'BuildFailed'))).toBeUndefined();
    expect(pruneHoldIn(undefined)).toBeUndefined();
  });

  it('reads Argo CD’s failing sync operation and an ApplicationSet shrink', () => {
    const argo = {
      controller: 'argocd',
      conditions: [],
      syncOperation: {
        phase: 'Running',
        failing: true,
        why: 'prune of Deployment/edge-gateway needs an approved prune preview in the GitOps console (uid x is not approved)',
      },
    } as unknown as App;
    expect(pruneHold(argo)?.objects).toEqual(['Deployment/edge-gateway']);
    expect(
      pruneHoldIn(
        'the ApplicationSet shrink deleting Application argocd/edge-dev needs an approved prune preview in the GitOps console',
      )?.objects,
    ).toEqual(['Application/edge-dev']);
    // a sync that is not failing is not held
    expect(pruneHold({ ...argo, syncOperation: { phase: 'Succeeded' } } as App)).toBeUndefined();
  });

  it('names three objects and counts the rest', () => {
    const msg = Array.from({ length: 5 }, (_, i) => `prune of ConfigMap/c${i} needs an approved prune preview`).join(
      '\n',
    );
    expect(pruneHoldLine(pruneHoldIn(msg) as NonNullable<ReturnType<typeof pruneHoldIn>>)).toBe(
      'held by the prune policy: deleting ConfigMap/c0, ConfigMap/c1, ConfigMap/c2 and 2 more needs an approved prune preview',
    );
  });
});
