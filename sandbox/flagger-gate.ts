// SIMULATION — Flagger's load tester gates (the `flagger-loadtester` API: /gate/check, /gate/open, /rollback/check,
// /rollback/open, /gate/close, /rollback/close), served by the business endpoint stand-in (sandbox/business-endpoint.ts)
// on 127.0.0.1. A seeded Canary's `confirm-promotion` webhook asks /gate/check and its `rollback` webhook
// /rollback/check. Unlike the load tester, an approval is for one canary revision: /gate/open names the Canary's
// `status.lastAppliedSpec` the person saw, it is refused (409) when the Canary has moved on, and /gate/check
// answers 200 only while that revision is the one under analysis — an approval never opens the gate for the next
// canary. The console's governed promote/rollback actions call the open endpoints (src/server/apps/flagger-actions.ts).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { kubeRequest, type KubeTarget } from './kube-http.ts';

type Json = Record<string, unknown>;
type Switch = 'gate' | 'rollback';

const stateFile = (dir: string, sw: Switch, ns: string, name: string) =>
  join(dir, 'flagger-gates', `${sw}-${ns}-${name}.json`);

async function body(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    const j = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    return j && typeof j === 'object' ? (j as Json) : {};
  } catch {
    return {};
  }
}

async function canarySpec(target: KubeTarget, ns: string, name: string): Promise<string | undefined> {
  const r = await kubeRequest(
    target,
    'GET',
    `/apis/flagger.app/v1beta1/namespaces/${encodeURIComponent(ns)}/canaries/${encodeURIComponent(name)}`,
  );
  const st = (r.json.status ?? {}) as Json;
  return r.status === 200 && typeof st.lastAppliedSpec === 'string' ? st.lastAppliedSpec : undefined;
}

/** Answers a gate request; false when the path is not a gate's (the caller answers it). */
export function handleGate(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: { controlDir: string; target: KubeTarget; say: (m: string) => void },
): boolean {
  const m = /^\/(gate|rollback)\/(check|open|close)$/.exec((req.url ?? '').split('?')[0] ?? '');
  if (!m) return false;
  const sw = m[1] as Switch;
  const verb = m[2] as 'check' | 'open' | 'close';
  const reply = (status: number, j: Json) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'x-sandbox-simulation': 'flagger load tester gate stand-in (gitops-console sandbox)',
    });
    res.end(JSON.stringify(j));
  };
  (async () => {
    if (req.method !== 'POST') return reply(405, { error: 'POST only' });
    const b = await body(req);
    const ns = typeof b.namespace === 'string' ? b.namespace : '';
    const name = typeof b.name === 'string' ? b.name : '';
    if (!/^[a-z0-9.-]{1,253}$/.test(ns) || !/^[a-z0-9.-]{1,253}$/.test(name))
      return reply(400, { error: 'name and namespace of the Canary are required' });
    const f = stateFile(ctx.controlDir, sw, ns, name);
    if (verb === 'close') {
      rmSync(f, { force: true });
      ctx.say(`${sw} closed for ${ns}/${name}`);
      return reply(200, { [sw]: 'closed' });
    }
    const current = await canarySpec(ctx.target, ns, name);
    if (verb === 'open') {
      const want = typeof b.lastAppliedSpec === 'string' ? b.lastAppliedSpec : '';
      if (!current || want !== current)
        return reply(409, {
          error: `Canary ${ns}/${name} is at revision ${current ?? '(none)'}, not ${want || '(none given)'}`,
          current: current ?? null,
        });
      mkdirSync(join(ctx.controlDir, 'flagger-gates'), { recursive: true });
      writeFileSync(f, JSON.stringify({ lastAppliedSpec: want, by: b.by ?? null, at: new Date().toISOString() }));
      ctx.say(`${sw} opened for ${ns}/${name} at ${want} by ${String(b.by ?? '?')}`);
      return reply(200, { [sw]: 'open', lastAppliedSpec: want });
    }
    // check: open only for the revision it was opened for
    const opened = existsSync(f)
      ? ((JSON.parse(readFileSync(f, 'utf8')) as { lastAppliedSpec?: string }).lastAppliedSpec ?? '')
      : '';
    if (opened && current && opened === current) return reply(200, { [sw]: 'open' });
    return reply(403, { [sw]: 'closed', waitingFor: current ?? null });
  })().catch((e: unknown) => reply(500, { error: (e as Error).message }));
  return true;
}
