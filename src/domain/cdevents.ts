// Evidence as CDEvents (issue 28): each evidence record a sink should hear about becomes exactly one CDEvent
// (spec v0.4.1), its id derived from the record's sequence number (a receiver de-duplicates at-least-once
// deliveries by it) and its customData naming the record's seq and chain hash (what a receiver can check
// against an export). Standard types where the vocabulary fits — a merged change, a service deployed, a failed
// verification as an incident — and `dev.cdeventsx.gitopsconsole-<subject>.<predicate>.0.1.0` where none does,
// as the spec allows. Only ids, names, states and links leave: a whitelist of data fields, never a message
// body, an author's e-mail, a diff, a Secret value or a token.
import type { EvidenceEvent, EvidenceType } from './evidence.ts';

export const CDEVENTS_SPEC_VERSION = '0.4.1';
const CUSTOM_VERSION = '0.1.0';
const TOOL = 'gitopsconsole';

export interface CDEvent {
  context: {
    version: string;
    id: string;
    source: string;
    type: string;
    timestamp: string;
    schemaUri?: string;
  };
  subject: { id: string; source: string; type: string; content: Record<string, unknown> };
  customData: { evidence: { seq: number; hash: string; type: EvidenceType }; links?: Record<string, string> };
  customDataContentType: 'application/json';
}

/** The evidence types a sink hears about (anything else stays in the console). */
export const CDEVENT_EVIDENCE_TYPES: readonly EvidenceType[] = [
  'release.change',
  'release.artifact',
  'release.render',
  'release.reconcile',
  'release.health',
  'release.verification',
  'release.review',
  'release.validation',
  'release.promotion',
  'release.canary',
  'release.rollback-requested',
  'freeze.started',
  'freeze.extended',
  'freeze.ended',
  'freeze.expired',
  'freeze.interfered',
  'freeze.ending-soon',
  'freeze.write-back',
  'freeze.restored',
  'prune.requested',
  'prune.approved',
  'prune.rejected',
  'prune.voided',
  'prune.executed',
  'drift.detected',
  'drift.reverted',
  'drift.adopted',
  'rollout.control',
];
const EMITTED = new Set<string>(CDEVENT_EVIDENCE_TYPES);

/** data fields that may leave (scalars only; anything else is dropped) */
const DATA_FIELDS = [
  'status',
  'sha',
  'revision',
  'controller',
  'previewId',
  'freezeId',
  'renderHash',
  'artifactDigest',
  'objects',
  'expiresAt',
  'verb',
  'step',
  'weight',
  'phase',
  'applicationSet',
  'requiredApprovals',
  'stage',
] as const;
const REASON_MAX = 200;

export interface CDEventOptions {
  /** the context source: the console's public URL, or a name for it */
  source: string;
  /** the console's public URL, for links (omitted without one) */
  publicUrl?: string;
}

export function isEmitted(type: string): boolean {
  return EMITTED.has(type);
}

/** The CDEvent of one evidence record, or null when sinks do not hear about its type. */
export function toCDEvent(e: EvidenceEvent, opts: CDEventOptions): CDEvent | null {
  if (!EMITTED.has(e.type)) return null;
  const d = e.data ?? {};
  const status = typeof d.status === 'string' ? d.status : 'ok';
  const content: Record<string, unknown> = {
    ...(e.app ? { app: e.app } : {}),
    ...(e.cluster ? { cluster: e.cluster } : {}),
    ...(e.env ? { environment: { id: e.env } } : {}),
    actor: e.actor,
  };
  for (const f of DATA_FIELDS) {
    const v = d[f];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') content[f] = v;
  }
  if (typeof d.reason === 'string' && d.reason)
    content.reason = d.reason.length > REASON_MAX ? `${d.reason.slice(0, REASON_MAX - 1)}…` : d.reason;
  const kind = standardType(e, status);
  const subjectSource = e.cluster ? `${opts.source}/clusters/${e.cluster}` : opts.source;
  const base = opts.publicUrl?.replace(/\/+$/, '');
  const links: Record<string, string> = {};
  if (base) {
    // the evidence browser filtered to this record's app and type (it is among the newest there)
    links.evidence = `${base}/evidence?${new URLSearchParams({ ...(e.app ? { app: e.app } : {}), type: e.type })}`;
    if (e.app) links.app = `${base}/apps/${encodeURIComponent(e.app)}`;
  }
  return {
    context: {
      version: CDEVENTS_SPEC_VERSION,
      id: `${opts.source}#${e.seq}`,
      source: opts.source,
      type: kind?.type ?? customType(e.type),
      timestamp: e.time,
    },
    subject: {
      id: kind?.subjectId ?? subjectIdOf(e),
      source: subjectSource,
      type: kind?.subjectType ?? `${TOOL}-${e.type.split('.')[0]}`,
      content: { ...content, ...(kind?.content ?? { state: e.type.split('.').slice(1).join('.') }) },
    },
    customData: {
      evidence: { seq: e.seq, hash: e.hash, type: e.type },
      ...(Object.keys(links).length ? { links } : {}),
    },
    customDataContentType: 'application/json',
  };
}

/** `release.change` → dev.cdeventsx.gitopsconsole-release.change.0.1.0 */
export function customType(type: string): string {
  const [subject = 'console', ...rest] = type.split('.');
  const predicate = (rest.join('-') || 'recorded').replace(/[^a-z0-9-]/gi, '-');
  return `dev.cdeventsx.${TOOL}-${subject}.${predicate}.${CUSTOM_VERSION}`;
}

function subjectIdOf(e: EvidenceEvent): string {
  const d = e.data ?? {};
  if (typeof d.previewId === 'string') return d.previewId;
  if (typeof d.freezeId === 'string') return d.freezeId;
  if (e.app && typeof d.sha === 'string') return `${e.app}@${d.sha}`;
  return e.app ?? `evidence-${e.seq}`;
}

interface Standard {
  type: string;
  subjectId: string;
  subjectType: string;
  content: Record<string, unknown>;
}

/** The spec's own vocabulary where it fits one record exactly. */
function standardType(e: EvidenceEvent, status: string): Standard | null {
  const d = e.data ?? {};
  const sha = typeof d.sha === 'string' ? d.sha : '';
  const sourceUrl = typeof d.sourceUrl === 'string' ? d.sourceUrl : '';
  const artifactId = e.app && sha ? `pkg:generic/${encodeURIComponent(e.app)}@${sha}` : undefined;
  // a commit read from Git: the change merged into the branch the app follows
  if (e.type === 'release.change' && status === 'ok' && sha)
    return {
      type: 'dev.cdevents.change.merged.0.2.0',
      subjectId: sha,
      subjectType: 'change',
      content: { state: 'change', ...(sourceUrl ? { repository: { id: sourceUrl } } : {}) },
    };
  // the release is live and healthy in its environment (a commit that changed nothing here deployed nothing: the
  // record stays, under the console's own type)
  if (e.type === 'release.health' && status === 'ok' && e.app && e.env && typeof d.unchangedFrom !== 'string')
    return {
      type: 'dev.cdevents.service.deployed.0.2.0',
      subjectId: e.app,
      subjectType: 'service',
      content: { state: 'health', ...(artifactId ? { artifactId } : {}) },
    };
  // a real request check failed after the release went live
  if (e.type === 'release.verification' && status === 'failed')
    return {
      type: 'dev.cdevents.incident.detected.0.2.0',
      subjectId: `${e.app ?? 'console'}@${sha || e.seq}#verification`,
      subjectType: 'incident',
      content: {
        state: 'verification',
        description: 'the release failed its verification',
        ...(e.app ? { service: { id: e.app } } : {}),
        ...(artifactId ? { artifactId } : {}),
      },
    };
  return null;
}
