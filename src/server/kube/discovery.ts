// kind → resource (plural, namespaced) from the apiserver's discovery documents, cached per group/version.
import { splitApiVersion } from '../../domain/refs.ts';
import type { ClusterConnection } from './connection.ts';

export interface ResourceInfo {
  plural: string;
  namespaced: boolean;
}

export class Discovery {
  private readonly cache = new Map<string, Promise<Map<string, ResourceInfo>>>();

  constructor(private readonly conn: ClusterConnection) {}

  private load(apiVersion: string): Promise<Map<string, ResourceInfo>> {
    let p = this.cache.get(apiVersion);
    if (!p) {
      const { group: g, version: v } = splitApiVersion(apiVersion);
      // callers pass what objects say; never let it become another path
      if (!/^[a-z0-9.-]*$/.test(g ?? '') || !/^v[0-9a-z]+$/.test(v ?? '') || apiVersion.split('/').length > 2)
        return Promise.reject(new Error(`not an apiVersion: ${apiVersion.slice(0, 100)}`));
      if (this.cache.size > 500) this.cache.clear();
      const path = g
        ? `/apis/${encodeURIComponent(g)}/${encodeURIComponent(v ?? '')}`
        : `/api/${encodeURIComponent(v ?? '')}`;
      p = this.conn
        .json<{ resources?: Array<{ name: string; kind: string; namespaced: boolean }> }>('GET', path, {
          timeoutMs: 10_000,
        })
        .then((d) => {
          const m = new Map<string, ResourceInfo>();
          for (const r of d.resources ?? [])
            if (!r.name.includes('/')) m.set(r.kind, { plural: r.name, namespaced: r.namespaced });
          return m;
        });
      p.catch(() => this.cache.delete(apiVersion));
      this.cache.set(apiVersion, p);
    }
    return p;
  }

  async resolve(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    return (await this.load(apiVersion)).get(kind);
  }

  async path(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<string> {
    const info = await this.resolve(apiVersion, kind);
    if (!info) throw new Error(`the cluster does not serve ${kind} in ${apiVersion}`);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = info.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : '';
    return `${base}${ns}/${info.plural}/${encodeURIComponent(name)}`;
  }
}
