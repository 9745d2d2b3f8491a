// The chaos matrix's parts (issue 42; docs/develop/chaos.md): a row is a governed action, a column a fault, a cell the
// action run through one console replica while the fault is injected at one point of it. After the fault heals the
// runner checks invariants from outside: the evidence (read from another replica and exported), the clusters, Git,
// the forge.
import type { ChildProcess } from 'node:child_process';
import type { Signed } from '../support/auth.ts';

/**
 * Where in the action the fault is injected:
 * - `before-intent`: before the request (the fault is there when the console records the intent);
 * - `after-intent`: the intent recorded, the action not started (the BFF held at its fault point);
 * - `mid-act`: part of the action done (a prune after its first delete);
 * - `after-act`: the action done, its outcome not recorded;
 * - `during`: the whole action runs under the fault (a replica's skewed clock).
 */
export type Point = 'before-intent' | 'after-intent' | 'mid-act' | 'after-act' | 'during';

/** One console process of the cell. */
export interface Replica {
  name: string;
  base: string;
  admin: Signed;
  child: ChildProcess;
  dataDir: string;
  log: string;
  /** the directory of its fault points (CONSOLE_TEST_FAULT_DIR) */
  faultDir: string;
  store: 'postgres' | 'sqlite';
  stop(): Promise<void>;
}

/** The replicas a cell runs on: `actor` acts (and takes the fault), `peer` (same PostgreSQL) observes and sweeps. */
export interface Console {
  actor: Replica;
  /** absent on SQLite (one replica) */
  peer?: Replica;
  /** the replica to read evidence from after recovery: the peer, or the actor when alone */
  reader(): Replica;
  /** a new actor after the old one was killed (same store, same fault directory kind) */
  respawnActor(): Promise<void>;
}

/** What a cell's action answered: the HTTP status and body, or the error when no answer came (the process died). */
export type Answer = { status: number; body: unknown; text: string } | { error: string };

/** What the runner knows about a cell when it checks the row's own invariants. */
export interface CellRun {
  point: Point;
  fault: string;
  answer: Answer;
  /** the intents of the row's type recorded in the cell (seq after the cell's mark) */
  intents: number[];
  /** whether the actor was killed in the cell */
  killed: boolean;
  /** adds a line to the cell's notes (what held, but is worth saying: duplicates seen) */
  note?: (s: string) => void;
}

export interface ActionRow<S = unknown> {
  /** e.g. `freeze-start` */
  id: string;
  /** what a person calls it (the matrix's row label) */
  label: string;
  /** the evidence type of its intent (`freeze.started`): the fault point's prefix */
  intentType: string;
  /** the points at which this action has a hook (every row has after-intent and after-act; mid-act where it exists) */
  points: Point[];
  /** the cluster whose apiserver the action writes to (the apiserver faults' target) */
  cluster(s: S): string;
  /** once per run: the row's own estate (namespaces, repo, apps) */
  setup(): Promise<S>;
  teardown(s: S): Promise<void>;
  /** before each cell: the estate back to the start (end what the last cell left, wait for it to settle) */
  prepare(s: S, c: Console): Promise<void>;
  /** the action through `c.actor` */
  perform(s: S, c: Console): Promise<Answer>;
  /**
   * After recovery: the row's own invariants, checked from outside (cluster, Git, forge, evidence); returns what
   * broke, empty when all held. May wait (bounded) for the system to settle.
   */
  check(s: S, c: Console, run: CellRun): Promise<string[]>;
}

export interface Fault {
  /** e.g. `apiserver-hang` */
  id: string;
  /** the column it belongs to */
  column: string;
  /** the points it is injected at */
  points: Point[];
  /** the console it needs: two replicas on PostgreSQL (default), one on SQLite, or two with clocks apart */
  console: 'pg-pair' | 'sqlite' | 'skewed-pair';
  /** inject at the point (the actor held there, or before the request) */
  inject(ctx: FaultContext): Promise<void>;
  /** what the console says while the fault lasts (a string naming it), or why it does not say it */
  reported?(ctx: FaultContext): Promise<{ ok: boolean; said: string }>;
  /** end the fault and wait until the dependency is back */
  heal(ctx: FaultContext): Promise<void>;
}

export interface FaultContext {
  console: Console;
  /** the row's target cluster */
  cluster: string;
  /** the PostgreSQL server's control (pg-pair, skewed-pair) */
  pg?: { stop(): void; start(): void };
  note(s: string): void;
  /** the action's answer, once it came (a fault in place before the request is reported by the answer itself) */
  answer?: Answer;
}

export interface CellResult {
  row: string;
  fault: string;
  point: Point;
  ok: boolean;
  broken: string[];
  /** the seq numbers of the intents the cell recorded and their outcomes */
  seqs: string;
  said: string;
  ms: number;
  notes: string[];
}
