// The impersonation tests' shared parts (test/integration/impersonation*.test.ts): the Kubernetes RBAC of one run
// (every Role, ClusterRole and binding named and labelled with the run, so two runs, or a run and a leftover of a
// crashed one, never share an object; removed by that label at the end) and what Kubernetes itself answers
// for a user (a SubjectAccessReview asked as the sandbox admin).
import { randomBytes } from 'node:crypto';
import { kubectl } from '../../sandbox/state.ts';

const RBAC_API = 'rbac.authorization.k8s.io';
export const READ = ['get', 'list', 'watch'];
/** get, list and watch on everything */
export const READ_ALL = [{ apiGroups: ['*'], resources: ['*'], verbs: READ }];

export const user = (name: string) => ({ apiGroup: RBAC_API, kind: 'User', name });
export const group = (name: string) => ({ apiGroup: RBAC_API, kind: 'Group', name });
type Subject = ReturnType<typeof user>;

export interface RbacRun {
  /** `<file>-<random>`: part of every object's name, and its `console-test-run` label */
  run: string;
  /** a Role (in `ns`) or ClusterRole (without) `<base>-<run>`; its name */
  role(cluster: string, base: string, rules: object[], ns?: string): string;
  /** a RoleBinding of a Role (in `ns`) or a ClusterRoleBinding of a ClusterRole (without) `<base>-<run>` */
  bind(cluster: string, base: string, roleName: string, subjects: Subject[], ns?: string): void;
  /** deletes every object of the run, on every cluster */
  cleanup(): void;
}

export function rbacRun(file: string): RbacRun {
  const run = `${file}-${randomBytes(3).toString('hex')}`;
  const labels = { 'console-test': file, 'console-test-run': run };
  const meta = (base: string, ns?: string) => ({
    name: `${base}-${run}`,
    ...(ns ? { namespace: ns } : {}),
    labels,
  });
  const clusters = new Set<string>();
  const apply = (cluster: string, o: object) => {
    clusters.add(cluster);
    kubectl(cluster, ['apply', '-f', '-'], JSON.stringify(o));
  };
  return {
    run,
    role(cluster, base, rules, ns) {
      const metadata = meta(base, ns);
      apply(cluster, { apiVersion: `${RBAC_API}/v1`, kind: ns ? 'Role' : 'ClusterRole', metadata, rules });
      return metadata.name;
    },
    bind(cluster, base, roleName, subjects, ns) {
      apply(cluster, {
        apiVersion: `${RBAC_API}/v1`,
        kind: ns ? 'RoleBinding' : 'ClusterRoleBinding',
        metadata: meta(base, ns),
        roleRef: { apiGroup: RBAC_API, kind: ns ? 'Role' : 'ClusterRole', name: roleName },
        subjects,
      });
    },
    cleanup() {
      const selector = `console-test-run=${run}`;
      for (const c of clusters) {
        kubectl(c, ['delete', 'rolebinding,role', '-A', '-l', selector, '--ignore-not-found', '--wait=false']);
        kubectl(c, ['delete', 'clusterrolebinding,clusterrole', '-l', selector, '--ignore-not-found', '--wait=false']);
      }
    },
  };
}

/** What Kubernetes itself answers for `who` (a SubjectAccessReview asked with the sandbox admin identity). */
export function canI(who: string, verb: string, groupName: string, resource: string, ns: string): boolean {
  const review = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: who,
      groups: ['system:authenticated'],
      resourceAttributes: { verb, group: groupName, resource, namespace: ns },
    },
  };
  const out = JSON.parse(kubectl('nonprod', ['create', '-f', '-', '-o', 'json'], JSON.stringify(review))) as {
    status?: { allowed?: boolean };
  };
  return out.status?.allowed === true;
}
