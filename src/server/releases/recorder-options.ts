// What the release recorder is given (main.ts builds it): the catalog, the evidence store and recorder, the
// renderer, the verification and registry settings, and the server-side dry-run behind the validation state.
import type { App } from '../../domain/app.ts';
import type { ForgeDirectory } from '../forge/forge-directory.ts';
import type { AppCatalog } from '../apps/index.ts';
import type { ObjectIndex } from '../kube/object-index.ts';
import type { RenderResult } from '../diff/index.ts';
import type { EvidenceStore } from '../evidence/index.ts';
import type { EvidenceRecorder } from '../evidence/index.ts';
import type { ManifestStore } from '../store/manifest-store.ts';
import type { ImageAutomationView } from '../../domain/image-automation.ts';

export interface ReleaseRecorderLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ReleaseRecorderOptions {
  catalog: AppCatalog;
  recorder: EvidenceRecorder;
  store: EvidenceStore;
  index: ObjectIndex;
  /** the app's desired state as its controller renders it (DiffService.desired as the console) */
  desired: (app: App) => Promise<RenderResult>;
  dataDir: string;
  log: ReleaseRecorderLog;
  /** CONSOLE_VERIFICATIONS_FILE: {"<cluster>/<env>" | app id: {url, expectStatus, bodyMatch?, versionHeader?, timeoutMs}} */
  verificationsFile?: string | undefined;
  /** image host → registry base URL the tags are resolved at (CONSOLE_REGISTRY_MIRRORS host=url,…) */
  registryMirrors?: Record<string, string>;
  /** periodic verification of every app's live release (default 5 min) */
  verifyIntervalMs?: number;
  /** is the app's cluster answering now */
  reachable?: (cluster: string) => boolean;
  /** forges per repo host: the review state reads the pull request that merged a commit */
  forges?: ForgeDirectory | undefined;
  /** environments whose commits must be reviewed (a direct push fails the review state); default prod */
  reviewRequiredEnvs?: string[];
  /** dev → staging → prod: where a release is promoted to next */
  envOrder?: string[];
  /** a server-side dry-run of the app's render as its controller (the diff's); absent: validation is unknown */
  validate?: (app: App) => Promise<ValidationResult>;
  /** a forge that did not answer is asked again after this long (default 20 s) */
  reviewRetryMs?: number;
  /** where each release's masked render is kept by its hash (absent: renders are hashed, not kept) */
  manifests?: ManifestStore | undefined;
  /** Flux image automation of the app (the change state names a commit its controller pushed) */
  imageAutomation?: ((app: App) => ImageAutomationView | undefined) | undefined;
}

/** The server-side dry-run of one render: each desired object accepted, rejected (with why) or not checked. */
export interface ValidationResult {
  revision?: string | undefined;
  renderHash?: string | undefined;
  accepted: number;
  rejected: Array<{ object: string; reason: string }>;
  unchecked: Array<{ object: string; reason: string }>;
}
