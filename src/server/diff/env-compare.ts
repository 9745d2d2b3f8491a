// The same app across environments: its rendered objects in dev vs staging vs prod, field by field, and
// the image references per env (digest-pinned or a mutable tag). "The same app": same controller and
// source URL, and the same name once the env suffix is removed (digital-human-dev / -staging / -prod).
import type { App } from '../../domain/app.ts';
import { flattenObject } from '../../domain/field-diff.ts';
import type { Obj, RenderResult } from './render.ts';

export interface EnvCompare {
  /**
   * renderHash: the hash of the masked render (render.ts), never of Secret values in clear; error: the
   * render error with Secret values masked (render.ts masks RenderError text)
   */
  envs: Array<{ env: string; appId: string; cluster: string; revision?: string; renderHash?: string; error?: string }>;
  images: Array<{
    object: string;
    container: string;
    byEnv: Record<string, { ref: string; pinned: 'digest' | 'tag' }>;
  }>;
  fields: Array<{ object: string; path: string; byEnv: Record<string, unknown> }>;
}

export const baseName = (a: App) => (a.name.endsWith(`-${a.env}`) ? a.name.slice(0, -(a.env.length + 1)) : a.name);

export function familyOf(app: App, all: App[], envOrder: string[]): App[] {
  const fam = all.filter(
    (a) => a.controller === app.controller && a.source.url === app.source.url && baseName(a) === baseName(app),
  );
  const rank = (e: string) => (envOrder.includes(e) ? envOrder.indexOf(e) : envOrder.length);
  return fam.sort((a, b) => rank(a.env) - rank(b.env) || a.env.localeCompare(b.env));
}

const IGNORE = [/^metadata\.namespace$/, /^metadata\.labels\["?env"?\]$/, /^metadata\.labels\.env$/];
const objKey = (o: Obj) => `${String(o.kind)} ${String(((o.metadata ?? {}) as { name?: string }).name ?? '')}`;

export function compareRenders(
  rendered: Array<{ env: string; render?: RenderResult }>,
  maxFields = 500,
): Pick<EnvCompare, 'images' | 'fields'> {
  const byObj = new Map<string, Map<string, Obj>>();
  for (const r of rendered) {
    for (const o of r.render?.objects ?? []) {
      const k = objKey(o);
      let m = byObj.get(k);
      if (!m) byObj.set(k, (m = new Map()));
      m.set(r.env, o);
    }
  }
  const envs = rendered.filter((r) => r.render).map((r) => r.env);
  const images: EnvCompare['images'] = [];
  const fields: EnvCompare['fields'] = [];
  for (const [object, perEnv] of [...byObj.entries()].sort()) {
    const flat = new Map(
      envs.map((e) => [e, perEnv.get(e) ? flattenObject(perEnv.get(e)) : new Map<string, unknown>()]),
    );
    const paths = new Set<string>();
    for (const f of flat.values()) for (const p of f.keys()) paths.add(p);
    for (const path of [...paths].sort()) {
      if (IGNORE.some((re) => re.test(path))) continue;
      const values = envs.map((e) => flat.get(e)?.get(path));
      const m = /^spec\.template\.spec\.(?:initC|c)ontainers\[name=([^\]]+)\]\.image$/.exec(path);
      if (m) {
        const byEnv: EnvCompare['images'][number]['byEnv'] = {};
        envs.forEach((e, k) => {
          const v = values[k];
          if (v !== undefined) byEnv[e] = { ref: String(v), pinned: String(v).includes('@sha256:') ? 'digest' : 'tag' };
        });
        images.push({ object, container: m[1] ?? '', byEnv });
      }
      if (new Set(values.map((v) => JSON.stringify(v))).size > 1 && fields.length < maxFields) {
        fields.push({ object, path, byEnv: Object.fromEntries(envs.map((e, i) => [e, values[i]])) });
      }
    }
  }
  return { images, fields };
}
