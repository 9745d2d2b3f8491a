// The apiserver side of a prune: an object's API path (discovery, cached per cluster) and its live state, read
// from the apiserver, or from the informer cache for the kinds it watches.
import type { Obj } from '../../domain/object-meta.ts';
import type { ObjectRef } from '../../domain/refs.ts';
import { Discovery } from '../kube/discovery.ts';
import type { PruneServiceDeps } from './model.ts';

export const apiVersionOf = (r: ObjectRef) => (r.group ? `${r.group}/${r.version}` : r.version);

export class LiveReader {
  private readonly discoveries = new Map<string, Discovery>();

  constructor(private readonly deps: Pick<PruneServiceDeps, 'conn' | 'index'>) {}

  private discovery(cluster: string): Discovery {
    let d = this.discoveries.get(cluster);
    if (!d) this.discoveries.set(cluster, (d = new Discovery(this.deps.conn(cluster))));
    return d;
  }

  /** The object's API path on its cluster. */
  path(r: ObjectRef): Promise<string> {
    return this.discovery(r.cluster).path(apiVersionOf(r), r.kind, r.namespace, r.name);
  }

  /** An object read from the apiserver (not the cache); undefined when it does not exist. */
  async read(r: ObjectRef): Promise<Obj | undefined> {
    const conn = this.deps.conn(r.cluster);
    const path = await this.path(r);
    // Secrets: metadata only (the console never reads Secret data)
    const secret = r.group === '' && r.kind === 'Secret';
    const res = await conn.request('GET', path, {
      timeoutMs: 10_000,
      ...(secret ? { headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } } : {}),
    });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw conn.httpError(res, `GET ${r.kind} ${r.name}`);
    const o = JSON.parse(res.body) as Obj;
    return secret ? { apiVersion: apiVersionOf(r), kind: r.kind, metadata: o.metadata } : o;
  }

  /** A candidate's live object: the informer cache for watched kinds, else the apiserver. */
  async get(r: ObjectRef): Promise<Obj | undefined> {
    if (this.deps.index.watches(r.group, r.kind)) return this.deps.index.get(r.cluster, r);
    return this.read(r);
  }
}
