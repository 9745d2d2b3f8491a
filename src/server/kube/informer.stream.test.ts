// The informer's streamed list (WatchList) against a scripted connection: the initial events become the store
// at the end bookmark, changes follow on the same stream, a relist after 410 emits only real differences, and an
// apiserver that does not stream lists (a plain bookmark, a 422) is read with paged lists instead.
// test/integration/informer.test.ts runs the same against the real apiserver.
import { afterEach, describe, expect, it } from 'vitest';
import { KubeError, type ClusterConnection } from './connection.ts';
import { Informer, type InformerEvent, type KubeObject } from './informer.ts';

const CM = { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
type Ev = { type: string; object: Record<string, unknown> };
type Script = (path: string, emit: (e: Ev) => void, signal: AbortSignal) => Promise<void>;

const cm = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'dev', resourceVersion: rv } });
const ev = (type: string, object: Record<string, unknown>): Ev => ({ type, object });
const endOfInitial = (rv: string) =>
  ev('BOOKMARK', { metadata: { resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } } });
/** a watch that stays open until the informer stops */
const hang: Script = (_p, _e, signal) =>
  new Promise((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r())));

function fakeConn(watches: Script[], pages: Array<{ items: KubeObject[]; rv: string }> = []) {
  const paths: string[] = [];
  const lists: string[] = [];
  const conn = {
    name: 'c',
    async watch(path: string, emit: (e: Ev) => void, signal: AbortSignal) {
      paths.push(path);
      const next = watches.shift() ?? hang;
      return next(path, emit, signal);
    },
    async json(_m: string, path: string) {
      lists.push(path);
      const p = pages.shift() ?? { items: [], rv: '1' };
      return { metadata: { resourceVersion: p.rv }, items: p.items };
    },
  };
  return { conn: conn as unknown as ClusterConnection, paths, lists };
}

let inf: Informer | undefined;
afterEach(async () => {
  await inf?.stop();
  inf = undefined;
});

async function until(what: string, f: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!f()) throw new Error(`timed out: ${what}`);
}

describe('informer: streamed list (WatchList)', () => {
  it('the initial events become the store at the end bookmark; changes follow on the same stream', async () => {
    let emitLater: ((e: Ev) => void) | undefined;
    const { conn, paths, lists } = fakeConn([
      async (_p, emit, signal) => {
        emit(ev('ADDED', cm('a', '5')));
        emit(ev('ADDED', cm('b', '6')));
        expect(inf?.state.synced).toBe(false); // nothing is synced before the end of the initial events
        emit(endOfInitial('7'));
        emitLater = emit;
        await hang('', emit, signal);
      },
    ]);
    const events: InformerEvent[] = [];
    inf = new Informer(conn, CM, (e) => events.push(e));
    inf.start();
    await until('synced', () => inf!.state.synced);
    expect(inf.listMode).toBe('stream');
    expect(paths[0]).toContain('sendInitialEvents=true');
    expect(paths[0]).toContain('resourceVersionMatch=NotOlderThan');
    expect(lists).toEqual([]); // no paged list
    expect(events.map((e) => `${e.type} ${e.obj.metadata?.name}`)).toEqual(['add a', 'add b']);
    expect(inf.store.get('dev/a')).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    emitLater?.(ev('MODIFIED', cm('a', '8')));
    emitLater?.(ev('DELETED', cm('b', '9')));
    expect(events.slice(2).map((e) => `${e.type} ${e.obj.metadata?.name}`)).toEqual(['update a', 'delete b']);
    expect([...inf.store.keys()]).toEqual(['dev/a']);
  });

  it('after a 410 it streams again and emits only the real differences (no false deletion)', async () => {
    const { conn, paths } = fakeConn([
      async (_p, emit) => {
        emit(ev('ADDED', cm('a', '5')));
        emit(ev('ADDED', cm('b', '6')));
        emit(endOfInitial('7'));
        emit(ev('ERROR', { code: 410, message: 'too old resource version' }));
      },
      async (_p, emit, signal) => {
        emit(ev('ADDED', cm('a', '5')));
        emit(ev('ADDED', cm('b', '10')));
        emit(endOfInitial('11'));
        await hang('', emit, signal);
      },
    ]);
    const events: InformerEvent[] = [];
    inf = new Informer(conn, CM, (e) => events.push(e));
    inf.start();
    await until('two lists', () => inf!.state.relists === 2);
    expect(paths.filter((p) => p.includes('sendInitialEvents=true'))).toHaveLength(2);
    expect(events.map((e) => `${e.type} ${e.obj.metadata?.name}`)).toEqual(['add a', 'add b', 'update b']);
  });

  it('when the stream ends normally it watches on from the last resourceVersion (no second list)', async () => {
    const { conn, paths } = fakeConn([
      async (_p, emit) => {
        emit(ev('ADDED', cm('a', '5')));
        emit(endOfInitial('7'));
        emit(ev('BOOKMARK', { metadata: { resourceVersion: '12' } }));
      },
    ]);
    inf = new Informer(conn, CM, () => undefined);
    inf.start();
    await until('a plain watch', () => paths.length === 2);
    expect(paths[1]).toContain('resourceVersion=12');
    expect(paths[1]).not.toContain('sendInitialEvents');
    expect(inf.state.relists).toBe(1);
  });

  it.each<[string, Script]>([
    [
      'a plain bookmark first (the apiserver ignored sendInitialEvents)',
      async (_p, emit, signal) => {
        emit(ev('ADDED', cm('a', '5')));
        emit(ev('BOOKMARK', { metadata: { resourceVersion: '7' } }));
        await hang('', emit, signal);
      },
    ],
    [
      'a plain bookmark, and our abort of that stream surfaces as an error (as a real socket may)',
      async (_p, emit, signal) => {
        emit(ev('BOOKMARK', { metadata: { resourceVersion: '7' } }));
        await hang('', emit, signal);
        throw new KubeError('watch stream aborted by the server', 'c', 0, 'Aborted');
      },
    ],
    [
      'a 422 (WatchList turned off)',
      async () => {
        throw new KubeError('sendInitialEvents is forbidden', 'c', 422, 'Invalid');
      },
    ],
    ['the stream ends before the end of the initial events', async (_p, emit) => emit(ev('ADDED', cm('a', '5')))],
  ])('%s: pages instead, and keeps paging', async (_what, first) => {
    const { conn, lists, paths } = fakeConn(
      [first],
      [
        { items: [cm('a', '5'), cm('b', '6')], rv: '7' },
        { items: [], rv: '8' },
      ],
    );
    const events: InformerEvent[] = [];
    inf = new Informer(conn, CM, (e) => events.push(e));
    inf.start();
    await until('synced', () => inf!.state.synced);
    expect(inf.listMode).toBe('paged');
    expect(lists).toHaveLength(1);
    expect(events.map((e) => `${e.type} ${e.obj.metadata?.name}`)).toEqual(['add a', 'add b']);
    await until('its watch', () => paths.length === 2);
    expect(paths[1]).toContain('resourceVersion=7');
  });

  it('a 403 is an error (with back-off), not a reason to page', async () => {
    const { conn, lists } = fakeConn([
      async () => {
        throw new KubeError('forbidden', 'c', 403, 'Forbidden');
      },
    ]);
    inf = new Informer(conn, CM, () => undefined, { baseBackoffMs: 10_000, random: () => 0 });
    inf.start();
    await until('error', () => inf!.state.error !== undefined);
    expect(inf.state.error?.status).toBe(403);
    expect(lists).toEqual([]);
  });
});
