import { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import {
  EvidenceCheckpointsResponse,
  EvidenceExportQuery,
  EvidenceQuerySchema,
  EvidenceResponse,
  VerifyResponse,
  type EvidenceFilter,
} from '../../api/schemas.ts';
import { can, formatGrant } from '../../domain/access.ts';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import { parsed, validated } from '../http/respond.ts';
import type { AppDeps } from '../deps.ts';
import { allowed } from '../auth/index.ts';
import { exportChunks, exportFilter } from './export.ts';
import { expiredBy, manifestBundleChunks } from './manifest-bundle.ts';
import { loadSigningKey, signingKeyPath, type SigningKey } from './signing.ts';
import { ManifestStore } from '../store/manifest-store.ts';
import { HttpError } from '../http/errors.ts';
import type { EvidenceQuery } from './store.ts';

// a page whose events the reader may mostly not see is read in more rounds, up to this many
const MAX_ROUNDS = 8;

/** The store query of the browser's filters. */
export function storeFilter(f: EvidenceFilter): EvidenceQuery {
  return {
    ...(f.app ? { app: f.app } : {}),
    ...(f.cluster ? { cluster: f.cluster } : {}),
    ...(f.env ? { env: f.env } : {}),
    ...(f.actor ? { actor: f.actor } : {}),
    ...(f.type?.length ? { type: f.type } : {}),
    ...(f.from ? { from: f.from } : {}),
    ...(f.to ? { to: f.to } : {}),
    ...(f.q?.trim() ? { text: f.q.trim() } : {}),
  };
}

// each event is visible where its own cluster and environment are; events without one (console start,
// cluster connected, sign-ins) only to grants on every cluster / every environment
const NOWHERE = '\u0000'; // matched only by '*' grants
const visibleTo =
  (req: FastifyRequest) =>
  (e: { cluster?: string | null; env?: string | null }): boolean =>
    allowed(req, 'evidence.read', { cluster: e.cluster ?? NOWHERE, env: e.env ?? NOWHERE });

/**
 * The export's per-grant filter: undefined when the reader's grants cover every event (a grant on every cluster
 * and every environment sees the events with neither too), else the test and the grants it stands for.
 */
export function readerFilter(
  req: FastifyRequest,
): { grants: string[]; test(e: { cluster: string | null; env: string | null }): boolean } | undefined {
  const test = visibleTo(req);
  if (test({ cluster: null, env: null })) return undefined;
  const grants = (req.principal?.grants ?? []).filter((g) => can([g], 'evidence.read')).map(formatGrant);
  return { grants, test };
}

/**
 * One page, newest first, of the events the reader may see. The visibility filter runs after the query, so
 * a page can come back short: read on (bounded) until `limit` visible events or the end. `nextCursor` is the
 * seq to continue below (the last one read), null at the end.
 */
export async function visiblePage(
  list: (q: EvidenceQuery) => Promise<EvidenceEvent[]>,
  filter: EvidenceQuery,
  visible: (e: EvidenceEvent) => boolean,
  before: number | undefined,
  limit: number,
): Promise<{ events: EvidenceEvent[]; nextCursor: number | null }> {
  const events: EvidenceEvent[] = [];
  let cursor = before;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const size = round === 0 ? limit : Math.min(1000, limit * 4);
    const batch = await list({ ...filter, ...(cursor !== undefined ? { beforeSeq: cursor } : {}), limit: size });
    for (const [i, e] of batch.entries()) {
      cursor = e.seq;
      if (!visible(e)) continue;
      events.push(e);
      if (events.length === limit)
        return { events, nextCursor: batch.length < size && i === batch.length - 1 ? null : e.seq };
    }
    if (batch.length < size) return { events, nextCursor: null };
  }
  return { events, nextCursor: cursor ?? null };
}

const stamp = () => new Date().toISOString().replace(/[:.]/g, '-');

/** A streamed file download, never cached. */
function download(rep: FastifyReply, type: string, filename: string, chunks: AsyncIterable<string>) {
  return rep
    .header('Content-Type', type)
    .header('Content-Disposition', `attachment; filename="${filename}"`)
    .header('Cache-Control', 'no-store')
    .send(Readable.from(chunks));
}

export const evidenceRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const signingKey = (): SigningKey => {
    if (!deps.dataDir && !process.env.CONSOLE_EVIDENCE_SIGNING_KEY_FILE)
      throw new HttpError(404, 'NotFound', 'this console signs no checkpoints');
    return loadSigningKey(signingKeyPath(deps.dataDir ?? ''));
  };

  // the trailer of an export is signed with the checkpoint key; a console without one (tests with no data
  // dir) writes it unsigned, which `cli evidence verify --public-key` refuses
  const exportKey = (): SigningKey | undefined =>
    deps.dataDir || process.env.CONSOLE_EVIDENCE_SIGNING_KEY_FILE ? signingKey() : undefined;

  app.get('/api/evidence', { config: { access: { action: 'evidence.read', scope: 'anywhere' } } }, async (req) => {
    const q = parsed(EvidenceQuerySchema, req.query);
    const page = await visiblePage(
      (sq) => deps.store.list(sq),
      storeFilter(q),
      visibleTo(req),
      q.before,
      q.limit ?? 200,
    );
    return validated(EvidenceResponse, page);
  });

  app.get(
    '/api/evidence/export',
    { config: { access: { action: 'evidence.read', scope: 'anywhere' } } },
    async (req, rep) => {
      const q = parsed(EvidenceExportQuery, req.query);
      const filter = storeFilter(q);
      const visible = readerFilter(req);
      // the trailer says what was left out (the query's filters, the reader's grants); `cli evidence verify`
      // accepts such an export only with --filtered, and its name says so
      const filtered = exportFilter(filter, visible?.grants) !== null;
      const key = exportKey();
      const chunks = exportChunks(deps.store, filter, { format: q.format, visible, key });
      return download(
        rep,
        q.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
        `evidence-${filtered ? 'filtered-' : ''}${stamp()}.${q.format}`,
        chunks,
      );
    },
  );

  // the manifests the export's release records kept (issue 28), for `cli evidence verify … --manifests`
  app.get(
    '/api/evidence/export/manifests',
    { config: { access: { action: 'evidence.read', scope: 'anywhere' } } },
    async (req, rep) => {
      const q = parsed(EvidenceExportQuery, req.query);
      const visible = readerFilter(req);
      const chunks = manifestBundleChunks(deps.store, new ManifestStore(deps.store), storeFilter(q), visible?.test);
      return download(rep, 'application/x-ndjson; charset=utf-8', `evidence-manifests-${stamp()}.jsonl`, chunks);
    },
  );

  app.get(
    '/api/evidence/verify',
    { config: { access: { action: 'evidence.verify', scope: 'anywhere' } } },
    async () => {
      let publicKey: string | undefined;
      try {
        publicKey = signingKey().publicKeyPem;
      } catch {
        publicKey = undefined; // no key (tests without a data dir): the checkpoints' hashes are still checked
      }
      const chain = await deps.store.verify(publicKey ? { publicKey } : {});
      // the manifests kept per release (store/manifest-store.ts): each must still hash to its key, the render hash
      // the chain holds; one that does not breaks the evidence at the render record naming it
      // a tombstone (expired under retention) must be named by an expiry the chain holds
      const manifests = await new ManifestStore(deps.store).verify(200, await expiredInChain(deps.store));
      const gone = manifests.unproven[0];
      if (chain.ok && gone)
        return validated(VerifyResponse, {
          ok: false,
          count: chain.count,
          brokenAt: (await deps.store.list({ type: 'release.render', text: gone, limit: 1 }))[0]?.seq ?? chain.count,
          reason: `the stored manifest of ${gone} was removed without an expiry in the chain${
            manifests.unproven.length > 1 ? ` (and ${manifests.unproven.length - 1} more)` : ''
          }`,
          manifests,
        });
      const first = manifests.tampered[0];
      if (!chain.ok || !first) return validated(VerifyResponse, { ...chain, manifests });
      const at = (await deps.store.list({ type: 'release.render', text: first, limit: 1 }))[0];
      return validated(VerifyResponse, {
        ok: false,
        count: chain.count,
        brokenAt: at?.seq ?? chain.count,
        reason: `the stored manifest of ${first} does not match its hash: it was changed after it was recorded${
          manifests.tampered.length > 1 ? ` (and ${manifests.tampered.length - 1} more)` : ''
        }`,
        manifests,
      });
    },
  );

  // the public half of the checkpoint key: anyone signed in may check a checkpoint with it
  app.get('/api/evidence/public-key', { config: { access: { signedIn: true } } }, async (_req, rep) =>
    rep.type('application/x-pem-file').header('Cache-Control', 'no-store').send(signingKey().publicKeyPem),
  );

  app.get(
    '/api/evidence/checkpoints',
    { config: { access: { action: 'evidence.read', scope: 'anywhere' } } },
    async () => validated(EvidenceCheckpointsResponse, { checkpoints: (await deps.store.checkpoints?.()) ?? [] }),
  );
};

/** every render hash the chain's manifest expiries name (their outcome records), read in pages */
async function expiredInChain(store: AppDeps['store']): Promise<Set<string>> {
  const out = new Set<string>();
  let before: number | undefined;
  for (;;) {
    const page = await store.list({
      type: 'action.completed',
      text: 'release.manifests-expired',
      ...(before !== undefined ? { beforeSeq: before } : {}),
      limit: 500,
    });
    for (const e of page) for (const h of expiredBy(e)) out.add(h);
    if (page.length < 500) return out;
    before = page[page.length - 1]?.seq;
  }
}
