// What the contract tier's bare clusters hold besides the sandbox's basics: the seed estate's GitOps objects exactly
// as a sandbox cluster is given them (sandbox/flux-objects.ts: GitRepository, infra and app Kustomizations, Argo CD
// AppProject, Applications and ApplicationSets), and a render-worker Deployment per environment namespace. No
// controller runs: the objects have no status, nothing reconciles them, their Git URL answers nothing.
import { argoObjects, fluxObjects } from '../../sandbox/flux-objects.ts';

/** The seed objects' Git URL: a loopback port nothing listens on (nothing here fetches it). */
export const BARE_GIT_URL = 'http://127.0.0.1:9/platform/digital-human.git';

/** A Deployment as the seed's workloads are labelled (no pods: no controller-manager, no nodes). */
export function deployment(namespace: string, name: string, replicas = 2): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${namespace}
  labels:
    app: ${name}
spec:
  replicas: ${replicas}
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
        - name: ${name}
          image: registry.example/${name}:1.0.0
`;
}

/** Every seed object of one cluster, as YAML documents. */
export function seedObjects(cluster: { name: string; namespaces: string[]; apiserver: string }): string {
  return [
    fluxObjects(cluster.namespaces, BARE_GIT_URL),
    argoObjects(cluster.name, cluster.namespaces, BARE_GIT_URL, cluster.apiserver),
    ...cluster.namespaces.map((ns) => deployment(ns, 'render-worker')),
  ].join('\n---\n');
}
