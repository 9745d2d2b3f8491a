// One source for the console's RBAC and admission policy: deploy/*.yaml. The Helm chart (files/, read with
// .Files.Get) and the kustomize base (self-contained, so Flux can build it from a repo) carry byte-equal
// copies; this test fails when one drifts. Fix: copy the file again, e.g.
//   cp deploy/rbac.yaml deploy/chart/files/rbac.yaml && cp deploy/rbac.yaml deploy/kustomize/rbac.yaml
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const read = (p: string) => readFileSync(join(root, p), 'utf8');

const copies: Array<[source: string, copy: string]> = [
  ['deploy/rbac.yaml', 'deploy/chart/files/rbac.yaml'],
  ['deploy/rbac.yaml', 'deploy/kustomize/rbac.yaml'],
  ['deploy/rbac-impersonation.yaml', 'deploy/chart/files/rbac-impersonation.yaml'],
  ['deploy/prune-admission-policy.yaml', 'deploy/chart/files/prune-admission-policy.yaml'],
];

describe('deploy artifacts carry the same RBAC and policy as deploy/', () => {
  for (const [source, copy] of copies)
    it(`${copy} equals ${source}`, () => {
      expect(read(copy), `cp ${source} ${copy}`).toBe(read(source));
    });

  it('the chart and the kustomize base include them', () => {
    expect(read('deploy/chart/templates/rbac.yaml')).toContain('"files/rbac.yaml"');
    expect(read('deploy/chart/templates/rbac.yaml')).toContain('"files/rbac-impersonation.yaml"');
    expect(read('deploy/chart/templates/prune-admission-policy.yaml')).toContain('"files/prune-admission-policy.yaml"');
    expect(read('deploy/kustomize/kustomization.yaml')).toMatch(/^ {2}- rbac\.yaml$/m);
  });
});

describe("the console's governed cluster-scoped kinds are the policy's", () => {
  it('gitops-console-prune-cluster matches exactly GOVERNED_CLUSTER_KINDS (the executor lists those, never deletes them)', async () => {
    const { parseAllDocuments } = await import('yaml');
    const { GOVERNED_CLUSTER_KINDS } = await import('../../src/domain/prune-approval.ts');
    type Rule = { apiGroups: string[]; resources: string[] };
    const policy = parseAllDocuments(read('deploy/prune-admission-policy.yaml'))
      .map(
        (d) =>
          d.toJS() as {
            kind?: string;
            metadata?: { name?: string };
            spec?: { matchConstraints?: { resourceRules?: Rule[] } };
          },
      )
      .find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata?.name === 'gitops-console-prune-cluster');
    const fromPolicy = (policy?.spec?.matchConstraints?.resourceRules ?? [])
      .flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res}`)))
      .sort();
    const plural = (kind: string) => kind.toLowerCase() + (kind.endsWith('s') ? 'es' : 's');
    const fromConsole = [...GOVERNED_CLUSTER_KINDS]
      .map((gk) => {
        const i = gk.lastIndexOf('/');
        return `${gk.slice(0, i)}/${plural(gk.slice(i + 1))}`;
      })
      .sort();
    expect(fromPolicy).toEqual(fromConsole);
  });
});
