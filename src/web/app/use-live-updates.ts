// The live stream: touches every feature's cached data, so it lives in the composition layer.
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { AppsResponse } from '../../api/schemas.ts';
import { listIsCurrent } from '../../domain/overview.ts';
import { appKeys, clusterKeys } from '../features/apps/api/apps-queries.ts';
import { applyToAppDetail, applyToAppList, applyToClusters } from '../features/apps/hooks/apply-stream-message.ts';
import { diffKeys } from '../features/diff/api/diff-queries.ts';
import { evidenceKeys } from '../features/evidence/api/evidence-queries.ts';
import { freezeKeys } from '../features/freeze/api/freeze-queries.ts';
import { pruneKeys } from '../features/prune/api/prune-queries.ts';
import { treeKeys } from '../features/tree/api/tree-queries.ts';
import { ApiError, unauthenticated } from '../lib/api-client.ts';
import { keyedDebounce, keyedThrottle } from '../lib/keyed-debounce.ts';
import { parsers, type Parsers } from '../lib/lazy-parsers.ts';
import { sessionKeys, sessionQueryOptions } from '../lib/session.ts';

export type StreamStatus = 'connecting' | 'live' | 'reconnecting';

const LIST_KEY = appKeys.list();
const isListKey = (k: readonly unknown[]) => k.length === LIST_KEY.length && k.every((x, i) => x === LIST_KEY[i]);

/** Subscribes to /api/stream and folds messages into the query cache. */
export function useLiveUpdates(): StreamStatus {
  const qc = useQueryClient();
  const [status, setStatus] = useState<StreamStatus>('connecting');
  useEffect(() => {
    const es = new EventSource('/api/stream');
    const trees = keyedDebounce(300, 2_000);
    // a diff: the first change of a burst at once, then at most one refetch per 2 s (bench:diff-storm)
    const diffs = keyedThrottle(2_000);
    let opened = false;
    let settle: ReturnType<typeof setTimeout> | undefined;
    // the schemas load beside the stream (lazy-parsers.ts): messages that come first wait, in order
    let stream: Parsers['StreamMessage'] | undefined;
    let closed = false;
    const early: string[] = [];
    // the catalog's version when this stream (re)began: its hello message
    let hello: string | undefined;
    es.onopen = () => {
      setStatus('live');
      hello = undefined;
      // anything missed while disconnected (or between the page's first load and this stream): refetch once;
      // at the first open a little later, so a second copy of the app list does not compete with the first
      // paint — and not the list at all when it was read at or after the stream began (10,000 apps: 8.9 MiB)
      if (opened) void qc.invalidateQueries({ queryKey: appKeys.all });
      else
        settle = setTimeout(() => {
          const list = qc.getQueryData<AppsResponse>(appKeys.list());
          const current = !!list && listIsCurrent(list.version, hello);
          void qc.invalidateQueries({
            queryKey: appKeys.all,
            ...(current ? { predicate: (q) => !isListKey(q.queryKey) } : {}),
          });
        }, 3000);
      opened = true;
    };
    es.onerror = () => {
      setStatus('reconnecting');
      // the stream also ends when the session does (sign-out elsewhere, expiry): re-check it
      void qc.invalidateQueries({ queryKey: sessionKeys.all }).then(() =>
        qc.fetchQuery(sessionQueryOptions()).catch((e: unknown) => {
          if (e instanceof ApiError && e.status === 401) unauthenticated();
        }),
      );
    };
    const handle = (data: string) => {
      if (!stream) return;
      const parsed = stream.safeParse(JSON.parse(data));
      if (!parsed.success) return;
      const m = parsed.data;
      if (m.type === 'cluster') {
        qc.setQueryData(clusterKeys.all, (d: Parameters<typeof applyToClusters>[0]) => applyToClusters(d, m));
        return;
      }
      if (m.type === 'state') {
        // a prune preview or a freeze changed, through this replica or another one
        void qc.invalidateQueries({ queryKey: m.kind === 'prune' ? pruneKeys.all : freezeKeys.all });
        if (m.app) void qc.invalidateQueries({ queryKey: evidenceKeys.forApp(m.app) });
        return;
      }
      if (m.type === 'hello') {
        hello = m.version;
        return;
      }
      if (m.type === 'resync') {
        void qc.invalidateQueries();
        return;
      }
      if (m.type === 'app-objects') {
        // every pod status change of the app sends one: refetch the tree and the diff once per burst (the
        // BFF answers an unchanged diff from its caches, without rendering or dry-running again)
        trees.run(m.id, () => void qc.invalidateQueries({ queryKey: treeKeys.app(m.id) }));
        diffs.run(m.id, () => void qc.invalidateQueries({ queryKey: diffKeys.app(m.id) }));
        return;
      }
      qc.setQueryData(appKeys.list(), (d: Parameters<typeof applyToAppList>[0]) => applyToAppList(d, m));
      const id = m.type === 'app-upsert' ? m.app.id : m.id;
      qc.setQueryData(appKeys.detail(id), (d: Parameters<typeof applyToAppDetail>[0]) => applyToAppDetail(d, m));
      void qc.invalidateQueries({ queryKey: appKeys.detail(id) });
      void qc.invalidateQueries({ queryKey: evidenceKeys.forApp(id) });
      void qc.invalidateQueries({ queryKey: treeKeys.app(id) });
    };
    es.onmessage = (ev: MessageEvent<string>) => {
      if (stream) handle(ev.data);
      else early.push(ev.data);
    };
    void parsers().then(
      (p) => {
        if (closed) return;
        stream = p.StreamMessage;
        for (const d of early.splice(0)) handle(d);
      },
      // the chunk did not load (a deploy replaced it, the network dropped): every cached view is refetched once
      // the page can parse again; a reload is what brings it back
      () => setStatus('reconnecting'),
    );
    return () => {
      closed = true;
      clearTimeout(settle);
      es.close();
      trees.cancelAll();
      diffs.cancelAll();
    };
  }, [qc]);
  return status;
}
