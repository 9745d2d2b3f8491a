// The per-app resource tree, and one object's YAML, field owners and events.
import { z } from 'zod';
import { HEALTH_STATES } from '../domain/app.ts';
import { NODE_SYNC } from '../domain/tree.ts';
import { FieldOwnerSchema, ObjectRefSchema } from './common.ts';
import { NodeDriftSchema } from './drift.ts';

/** An Argo CD hook's last run (domain/argo-hooks.ts HookRun): the tree's node and the diff's row say it the same way */
export const HookRunSchema = z.object({
  type: z.string(),
  phase: z.string().optional(),
  message: z.string().optional(),
  finishedAt: z.string().optional(),
  from: z.enum(['argocd', 'live']).optional(),
});

// ---- resource tree (issue: per-app sync and health tree)

export const TreeNodeSchema = z.object({
  id: z.string(),
  ref: ObjectRefSchema,
  uid: z.string().optional(),
  parentId: z.string().optional(),
  depth: z.number(),
  childCount: z.number(),
  managed: z.boolean(),
  health: z.enum(HEALTH_STATES),
  sync: z.enum(NODE_SYNC).optional(),
  reason: z.string(),
  createdAt: z.string().optional(),
  lastManager: z
    .object({
      manager: z.string(),
      operation: z.string(),
      time: z.string().optional(),
      subresource: z.string().optional(),
    })
    .optional(),
  /** set when the object has an open drift episode (the tracker's fast signal) */
  drift: NodeDriftSchema.optional(),
  /** a kind the console never reads (Secrets): live state unknown, not counted in the app's health */
  unread: z.literal(true).optional(),
  /**
   * an Argo CD hook (PreSync, PostSync, …; domain/argo-hooks.ts): it has no `sync` (Argo CD compares none) and is in
   * no sync count; its last run: the phase and message Argo CD recorded (`from: 'argocd'`) or the live object's own
   */
  hook: HookRunSchema.optional(),
});
export type TreeNodeDto = z.infer<typeof TreeNodeSchema>;
export const TreeResponse = z.object({
  appId: z.string(),
  generatedAt: z.string(),
  summary: z.object({
    health: z.enum(HEALTH_STATES),
    reason: z.string(),
    counts: z.record(z.string(), z.number()),
    sync: z.record(z.string(), z.number()),
    total: z.number(),
  }),
  nodes: z.array(TreeNodeSchema),
  /** true when only the first levels were requested (?depth=N), or a window of the tree (?window=N) */
  partial: z.boolean().optional(),
  /** with ?window=N: how many children the window's top set has in all (the roots, or `under`'s children) */
  topCount: z.number().optional(),
  /** with a filter (?q=, ?health=, ?sync=, ?kind=) or ?problems=1: how many nodes matched in all */
  matched: z.number().optional(),
  /**
   * with ?window=N (no filter): where the top set's next page starts, for `&after=` (a node id, or `^`: from the
   * beginning); absent when the walk reached the end. A later page may repeat a node the first window sent as a
   * problem (keep one copy per id); none is skipped (domain/tree-window.ts). Of a range (`&through=`): `through`,
   * when the set has nodes after it
   */
  next: z.string().optional(),
  /** with ?window=N: every kind in the whole tree (the window may hold only some) */
  kinds: z.array(z.string()).optional(),
  /** with ?under=ID: that node is not in the tree (any more) */
  missing: z.literal(true).optional(),
  /**
   * objects left out because the console's mapping puts their namespace in an environment the reader may not read
   * (and what hangs below them): counted, never dropped silently; the summary counts only what is shown
   */
  hiddenByEnvironment: z.number().int().positive().optional(),
});
export type TreeResponse = z.infer<typeof TreeResponse>;

/** ?window=N&depth=&under=&after=&through=&q=&health=&sync=&kind=&problems=1&limit= (issue 27); an empty value is unset */
const whole = (min: number, max: number, dflt: number) =>
  z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(min).max(max).default(dflt));
const text = z.string().max(1000).optional();
export const TreeWindowQuery = z.object({
  window: whole(1, 5000, 200),
  depth: whole(0, 10, 1),
  under: text,
  /** a later page of the top set: the `next` of the page before (domain/tree-window.ts parseCursor checks it) */
  after: text,
  /** with `after`: a range, every node up to this one included (a node id, or `$`: to the end), however many */
  through: text,
  q: text,
  health: text,
  sync: text,
  kind: text,
  problems: text,
  limit: whole(1, 5000, 1000),
});

// Object references are spliced into apiserver paths: only the shapes Kubernetes allows (no `/`, no `..`).
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const ObjectQuery = z.object({
  group: z.union([z.literal(''), z.string().max(253).regex(DNS_SUBDOMAIN, 'not an API group')]).default(''),
  version: z
    .string()
    .max(63)
    .regex(/^v[0-9]+((alpha|beta)[0-9]+)?$/, 'not an API version'),
  kind: z
    .string()
    .max(63)
    .regex(/^[A-Za-z][A-Za-z0-9]*$/, 'not a kind'),
  namespace: z
    .union([
      z.literal(''),
      z
        .string()
        .max(63)
        .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'not a namespace'),
    ])
    .optional(),
  name: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[^/%]+$/, 'not an object name')
    .refine((n) => n !== '.' && n !== '..', 'not an object name'),
});
export const ObjectResponse = z.object({
  ref: ObjectRefSchema,
  yaml: z.string(),
  owners: z.record(z.string(), z.array(FieldOwnerSchema)),
  managers: z.array(z.string()),
});
export type ObjectResponse = z.infer<typeof ObjectResponse>;
export const EventsResponse = z.object({
  events: z.array(
    z.object({
      type: z.string(),
      reason: z.string(),
      message: z.string(),
      count: z.number(),
      lastSeen: z.string().optional(),
      source: z.string().optional(),
    }),
  ),
});
export type EventsResponse = z.infer<typeof EventsResponse>;
