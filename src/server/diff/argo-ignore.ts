// Argo CD `ignoreDifferences`: the rules matching one object, and its jqPathExpressions run by a jq binary.
import { execFile } from 'node:child_process';
import type { IgnoreRule } from '../../domain/field-diff.ts';
import type { Obj } from './render.ts';

/** Argo CD ignoreDifferences matching one object (group/kind/name/namespace). */
export function ignoreFor(app: Obj, o: Obj): (IgnoreRule & { jqPathExpressions: string[] }) | undefined {
  const rules = ((app.spec as Obj | undefined)?.ignoreDifferences ?? []) as Array<{
    group?: string;
    kind: string;
    name?: string;
    namespace?: string;
    jsonPointers?: string[];
    managedFieldsManagers?: string[];
    jqPathExpressions?: string[];
  }>;
  const apiVersion = String(o.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  const md = (o.metadata ?? {}) as { name?: string; namespace?: string };
  const hits = rules.filter(
    (r) =>
      r.kind === o.kind &&
      (r.group ?? '') === group &&
      (!r.name || r.name === md.name) &&
      (!r.namespace || r.namespace === md.namespace),
  );
  if (!hits.length) return undefined;
  return {
    jsonPointers: hits.flatMap((h) => h.jsonPointers ?? []),
    managedFieldsManagers: hits.flatMap((h) => h.managedFieldsManagers ?? []),
    jqPathExpressions: hits.flatMap((h) => h.jqPathExpressions ?? []),
  };
}

export function jqDelete(bin: string, obj: unknown, exprs: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      bin,
      exprs,
      { timeout: 10_000, maxBuffer: 64 << 20, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`jqPathExpressions: ${(stderr || err.message).trim()}`));
        else resolve(JSON.parse(stdout) as unknown);
      },
    );
    child.stdin?.end(JSON.stringify(obj));
  });
}
