// Tests own their state (docs/develop/testing.md): two estates made from the same dev template at the same time — what
// two test files that both change "digital-human-dev" now do — are changed at the same time, and neither sees the
// other: each Kustomization applies only its own repository's commits into its own namespace, and the console
// shows each app at its own revision in env dev. The teardown leaves nothing behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getJson } from '../../sandbox/scenario.ts';
import { forgeApi } from '../../sandbox/scenario-forge.ts';
import { kubectl } from '../../sandbox/state.ts';
import { startTestConsole } from '../support/console.ts';
import { as } from '../support/auth.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';

type Json = Record<string, unknown>;

/** the dev overlay with render-worker's replica count set to n (the seed says 4) */
const withRenderReplicas = (n: number) => (w: string) => {
  const f = join(w, 'overlays/dev/kustomization.yaml');
  const text = readFileSync(f, 'utf8');
  const next = text.replace(/(- name: render-worker\n\s+count: )\d+/, `$1${n}`);
  if (next === text) throw new Error('the dev overlay has no render-worker count');
  writeFileSync(f, next);
};

/** the revision the console shows an app at (Flux: lastAppliedRevision) */
const revisionOf = (app: Json | undefined) => String((app?.source as Json | undefined)?.revisionObserved ?? '');

const liveReplicas = (e: Estate) =>
  Number((getJson(e.cluster, ['-n', e.namespace, 'get', 'deployment', 'render-worker']).spec as Json).replicas);

describe('test estates', () => {
  let a: Estate;
  let b: Estate;
  let con: Awaited<ReturnType<typeof startTestConsole>>;

  beforeAll(async () => {
    // made at the same time, as two test files running side by side would
    [a, b] = await Promise.all([
      ownEstate({ name: 'estate-a', env: 'dev', files: digitalHumanTemplate('dev') }),
      ownEstate({ name: 'estate-b', env: 'dev', files: digitalHumanTemplate('dev') }),
    ]);
    con = await startTestConsole();
  });

  afterAll(async () => {
    await con?.close();
    await Promise.all([a?.teardown(), b?.teardown()]);
  });

  it('two estates from one template change the same app at the same time without seeing each other', async () => {
    expect(a.namespace).not.toBe(b.namespace);
    expect(liveReplicas(a)).toBe(4);
    expect(liveReplicas(b)).toBe(4);
    const shaA = a.push('estate a: render-worker to 5', withRenderReplicas(5));
    const shaB = b.push('estate b: render-worker to 7', withRenderReplicas(7));
    await Promise.all([a.waitApplied(shaA), b.waitApplied(shaB)]);
    expect(liveReplicas(a)).toBe(5);
    expect(liveReplicas(b)).toBe(7);
    // each Kustomization applied its own repository's commit, never the other's
    const applied = (e: Estate) =>
      String(
        (getJson(e.cluster, ['-n', 'flux-system', 'get', 'kustomization', e.kustomization()]).status as Json)
          .lastAppliedRevision,
      );
    expect(applied(a)).toContain(shaA);
    expect(applied(b)).toContain(shaB);
    // the seed's own dev app was not touched: its namespace holds the seed's count
    expect(
      Number((getJson('nonprod', ['-n', 'dev', 'get', 'deployment', 'render-worker']).spec as Json).replicas),
    ).not.toBe(7);
  });

  it('the console maps each estate to env dev and shows each at its own revision', async () => {
    const shaA = a.push('estate a: render-worker to 3', withRenderReplicas(3));
    await a.waitApplied(shaA);
    const headB = String(
      (getJson(b.cluster, ['-n', 'flux-system', 'get', 'kustomization', b.kustomization()]).status as Json)
        .lastAppliedRevision,
    );
    let apps: Json[] = [];
    for (let i = 0; i < 60; i++) {
      const r = await as(con.admin, con.url, '/api/apps?env=dev');
      apps = (r.body as { apps: Json[] }).apps;
      const appA = apps.find((x) => x.id === a.appId());
      if (revisionOf(appA).includes(shaA)) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const appA = apps.find((x) => x.id === a.appId());
    const appB = apps.find((x) => x.id === b.appId());
    expect(appA?.env).toBe('dev');
    expect(appB?.env).toBe('dev');
    expect(revisionOf(appA)).toContain(shaA);
    expect(revisionOf(appB)).toBe(headB);
  });

  it('teardown removes the Kustomizations, the namespace and the repository', async () => {
    const e = await ownEstate({ name: 'estate-gone', env: 'dev', files: digitalHumanTemplate('dev') });
    await e.teardown();
    const left = kubectl(e.cluster, [
      ...['get', 'kustomizations.kustomize.toolkit.fluxcd.io,gitrepositories.source.toolkit.fluxcd.io'],
      ...['-n', 'flux-system', '-l', `gitops-console.dev/test-estate=${e.id}`, '-o', 'name'],
    ]);
    expect(left.trim()).toBe('');
    const ns = kubectl(e.cluster, [
      'get',
      'namespace',
      e.namespace,
      '--ignore-not-found',
      '-o',
      'jsonpath={.status.phase}',
    ]);
    expect(['', 'Terminating']).toContain(ns.trim());
    const repo = await forgeApi('admin', 'GET', `/repos/${e.forge.repo.owner}/${e.forge.repo.name}`);
    expect(repo.status).toBe(404);
  });
});
