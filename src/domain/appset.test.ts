import { describe, expect, it } from 'vitest';
import {
  evaluateGenerators,
  generatedNames,
  ownedBy,
  parseAppSet,
  pathMatch,
  renderTemplate,
  RESOURCES_FINALIZER,
  selectDirectories,
  shrinkOf,
} from './appset.ts';

const gitSet = (extra: Record<string, unknown> = {}) => ({
  metadata: { name: 'web', namespace: 'argocd', uid: 'u-set' },
  spec: {
    generators: [
      {
        git: {
          repoURL: 'http://git/x.git',
          revision: 'main',
          directories: [{ path: 'argo/web/*' }, { path: 'argo/web/prod', exclude: true }],
        },
      },
    ],
    template: { metadata: { name: 'web-{{path.basename}}' }, spec: {} },
    ...extra,
  },
});

const app = (name: string, owner = 'u-set', finalizers = [RESOURCES_FINALIZER]) => ({
  metadata: {
    name,
    namespace: 'argocd',
    uid: `u-${name}`,
    finalizers,
    ownerReferences: [{ kind: 'ApplicationSet', name: 'web', uid: owner }],
  },
  status: { resources: [{ group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'dev', name: 'w' }] },
});

describe('ApplicationSet generators as Argo CD evaluates them', () => {
  it('path.Match: * stays within a segment, classes and ? work', () => {
    expect(pathMatch('argo/web/*', 'argo/web/dev')).toBe(true);
    expect(pathMatch('argo/web/*', 'argo/web/dev/sub')).toBe(false);
    expect(pathMatch('argo/w?b/[ds]*', 'argo/web/staging')).toBe(true);
    expect(pathMatch('argo/web/*', 'argo/webx/dev')).toBe(false);
  });

  it('selects the included directories minus the excluded and hidden ones', () => {
    const s = parseAppSet(gitSet());
    const g = s.generators[0];
    if (g?.kind !== 'git-directories') throw new Error('not parsed as a Git directory generator');
    expect(
      selectDirectories(g, [
        'argo',
        'argo/web',
        'argo/web/dev',
        'argo/web/prod',
        'argo/web/.cache',
        'argo/web/staging',
      ]),
    ).toEqual(['argo/web/dev', 'argo/web/staging']);
  });

  it('renders fasttemplate and goTemplate names; a goTemplate function is unknown, not guessed', () => {
    expect(renderTemplate('web-{{ path.basename }}', { 'path.basename': 'dev' }, false)).toBe('web-dev');
    expect(renderTemplate('t-{{missing}}', {}, false)).toBe('t-{{missing}}');
    expect(renderTemplate('web-{{.path.basename}}', { path: { basename: 'dev' } }, true)).toBe('web-dev');
    expect(() => renderTemplate('{{ .name | upper }}', { name: 'a' }, true)).toThrow(/not a plain lookup/);
  });

  it('a directory removed from Git shrinks the set: the Application, its finalizer and resources are named', async () => {
    const s = parseAppSet(gitSet());
    const gen = generatedNames(s, await evaluateGenerators(s, async () => ['argo/web/dev']));
    expect(gen).toEqual({ names: ['web-dev'], unknown: null });
    const owned = ownedBy(s, [app('web-dev'), app('web-staging'), app('other', 'u-other')]);
    expect(owned.map((a) => a.name)).toEqual(['web-dev', 'web-staging']);
    const sh = shrinkOf(s, owned, gen);
    expect(sh.state).toBe('shrink');
    expect(sh.removed).toEqual([
      expect.objectContaining({
        name: 'web-staging',
        uid: 'u-web-staging',
        cascades: true,
        resources: [expect.objectContaining({ kind: 'Deployment' })],
      }),
    ]);
  });

  it('Git unreachable is unknown, never "every Application removed"', async () => {
    const s = parseAppSet(gitSet());
    const gen = generatedNames(
      s,
      await evaluateGenerators(s, async () => {
        throw new Error('connection refused');
      }),
    );
    expect(gen.names).toBeNull();
    const sh = shrinkOf(s, ownedBy(s, [app('web-dev')]), gen);
    expect(sh.state).toBe('unknown');
    expect(sh.removed).toEqual([]);
    expect(sh.reasons[0]).toMatch(/connection refused/);
  });

  it('a list generator: an element removed is a shrink; an empty output says all would go', async () => {
    const s = parseAppSet({
      metadata: { name: 'web', namespace: 'argocd', uid: 'u-set' },
      spec: {
        generators: [{ list: { elements: [{ tenant: 'alpha' }] } }],
        template: { metadata: { name: 'tenant-{{tenant}}' } },
      },
    });
    const owned = ownedBy(s, [app('tenant-alpha'), app('tenant-beta', 'u-set', [])]);
    const sh = shrinkOf(s, owned, generatedNames(s, await evaluateGenerators(s, async () => [])));
    expect(sh.removed.map((r) => [r.name, r.cascades])).toEqual([['tenant-beta', false]]);
    const empty = parseAppSet({
      ...s,
      metadata: { name: 'web', namespace: 'argocd', uid: 'u-set' },
      spec: { generators: [{ list: { elements: [] } }], template: { metadata: { name: 'tenant-{{tenant}}' } } },
    });
    const all = shrinkOf(empty, owned, generatedNames(empty, await evaluateGenerators(empty, async () => [])));
    expect(all.removed).toHaveLength(2);
    expect(all.reasons[0]).toMatch(/produce no Application: all 2/);
  });

  it('an unevaluated generator kind and a create-only policy plan nothing', async () => {
    const s = parseAppSet(gitSet({ generators: [{ clusters: {} }] }));
    const sh = shrinkOf(
      s,
      ownedBy(s, [app('web-dev')]),
      generatedNames(s, await evaluateGenerators(s, async () => [])),
    );
    expect(sh.state).toBe('unknown');
    expect(sh.reasons[0]).toMatch(/does not evaluate clusters generators/);
    const c = parseAppSet(gitSet({ syncPolicy: { applicationsSync: 'create-only' } }));
    const none = shrinkOf(
      c,
      ownedBy(c, [app('web-dev')]),
      generatedNames(c, await evaluateGenerators(c, async () => [])),
    );
    expect(none.state).toBe('nothing');
  });

  it('reads RollingSync steps when configured, and none otherwise', () => {
    const s = parseAppSet(
      gitSet({
        strategy: {
          type: 'RollingSync',
          rollingSync: {
            steps: [
              { matchExpressions: [{ key: 'env', operator: 'In', values: ['dev'] }] },
              { matchExpressions: [{ key: 'env', operator: 'In', values: ['staging'] }], maxUpdate: '50%' },
            ],
          },
        },
      }),
    );
    expect(s.rollingSync).toEqual([
      { matchExpressions: [{ key: 'env', operator: 'In', values: ['dev'] }], maxUpdate: null },
      { matchExpressions: [{ key: 'env', operator: 'In', values: ['staging'] }], maxUpdate: '50%' },
    ]);
    expect(parseAppSet(gitSet()).rollingSync).toBeNull();
  });
});
