// The database's one migration list (SQLite and PostgreSQL): the evidence chain and its checkpoints, prune
// previews, freezes and sessions. Run in order by the evidence store's backends when they open.

export interface Migration {
  id: number;
  /** portable SQL, run on both backends */
  sql: string[];
  /** dialect-specific statements (triggers), same intent on both */
  sqlite?: string[];
  postgres?: string[];
}

export const MIGRATIONS: Migration[] = [
  {
    id: 1,
    sql: [
      `CREATE TABLE IF NOT EXISTS evidence (
        seq BIGINT PRIMARY KEY,
        time TEXT NOT NULL,
        type TEXT NOT NULL,
        actor TEXT NOT NULL,
        app TEXT,
        cluster TEXT,
        env TEXT,
        data TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE
      )`,
      'CREATE INDEX IF NOT EXISTS evidence_app ON evidence (app, seq)',
      'CREATE INDEX IF NOT EXISTS evidence_type ON evidence (type, seq)',
      // the head is not an event: it records the last link so removals from the end are detected
      `CREATE TABLE IF NOT EXISTS evidence_head (id INTEGER PRIMARY KEY, seq BIGINT NOT NULL, hash TEXT NOT NULL)`,
    ],
    sqlite: [
      `CREATE TRIGGER IF NOT EXISTS evidence_no_update BEFORE UPDATE ON evidence BEGIN SELECT RAISE(ABORT, 'evidence is append-only'); END`,
      `CREATE TRIGGER IF NOT EXISTS evidence_no_delete BEFORE DELETE ON evidence BEGIN SELECT RAISE(ABORT, 'evidence is append-only'); END`,
    ],
    postgres: [
      `CREATE OR REPLACE FUNCTION evidence_append_only() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'evidence is append-only'; END $$ LANGUAGE plpgsql`,
      `DROP TRIGGER IF EXISTS evidence_no_change ON evidence`,
      `CREATE TRIGGER evidence_no_change BEFORE UPDATE OR DELETE ON evidence FOR EACH ROW EXECUTE FUNCTION evidence_append_only()`,
    ],
  },
  {
    // prune previews, their approvals and the intent journal of their execution (prune-store.ts)
    id: 2,
    sql: [
      `CREATE TABLE IF NOT EXISTS prune_previews (
        id TEXT PRIMARY KEY,
        app TEXT NOT NULL,
        cluster TEXT NOT NULL,
        env TEXT NOT NULL,
        status TEXT NOT NULL,
        status_reason TEXT,
        snapshot_hash TEXT NOT NULL,
        required_approvals INTEGER NOT NULL,
        requester_name TEXT NOT NULL,
        requester_issuer TEXT NOT NULL,
        requester_subject TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        executor TEXT,
        doc TEXT NOT NULL
      )`,
      'CREATE INDEX IF NOT EXISTS prune_previews_status ON prune_previews (status, created_at)',
      // one decision per identity (issuer + subject) per preview
      `CREATE TABLE IF NOT EXISTS prune_approvals (
        preview_id TEXT NOT NULL REFERENCES prune_previews (id),
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        name TEXT NOT NULL,
        decision TEXT NOT NULL,
        comment TEXT NOT NULL,
        time TEXT NOT NULL,
        evidence_seq BIGINT,
        PRIMARY KEY (preview_id, issuer, subject)
      )`,
      // one row per object to delete, written when the execution is claimed: planned → deleting → outcome
      `CREATE TABLE IF NOT EXISTS prune_journal (
        preview_id TEXT NOT NULL REFERENCES prune_previews (id),
        position INTEGER NOT NULL,
        batch INTEGER NOT NULL,
        object TEXT NOT NULL,
        uid TEXT NOT NULL,
        resource_version TEXT NOT NULL,
        state TEXT NOT NULL,
        detail TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (preview_id, position)
      )`,
    ],
  },
  {
    // incident freezes (freeze-store.ts): one row per freeze, and one claim per frozen app object — the
    // primary key is what keeps two freezes (or two replicas) off the same app
    id: 3,
    sql: [
      `CREATE TABLE IF NOT EXISTS freezes (
        id TEXT PRIMARY KEY,
        cluster TEXT NOT NULL,
        env TEXT,
        app TEXT,
        status TEXT NOT NULL,
        reason TEXT NOT NULL,
        incident TEXT,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        ended_at TEXT,
        ended_by TEXT,
        end_reason TEXT,
        doc TEXT NOT NULL
      )`,
      'CREATE INDEX IF NOT EXISTS freezes_status ON freezes (status, expires_at)',
      `CREATE TABLE IF NOT EXISTS freeze_claims (
        app TEXT PRIMARY KEY,
        freeze_id TEXT NOT NULL REFERENCES freezes (id)
      )`,
    ],
  },
  {
    // the evidence browser's filters stay fast at a million events (keyset paging by seq within each), and
    // signed checkpoints of the chain head (evidence/checkpoints.ts): the signing key lives outside the database
    id: 4,
    sql: [
      'CREATE INDEX IF NOT EXISTS evidence_env ON evidence (env, seq)',
      'CREATE INDEX IF NOT EXISTS evidence_cluster ON evidence (cluster, seq)',
      'CREATE INDEX IF NOT EXISTS evidence_actor ON evidence (actor, seq)',
      'CREATE INDEX IF NOT EXISTS evidence_app_type ON evidence (app, type, seq)',
      'CREATE INDEX IF NOT EXISTS evidence_time ON evidence (time)',
      `CREATE TABLE IF NOT EXISTS evidence_checkpoints (
        seq BIGINT PRIMARY KEY,
        hash TEXT NOT NULL,
        time TEXT NOT NULL,
        signature TEXT NOT NULL
      )`,
    ],
    sqlite: [
      `CREATE TRIGGER IF NOT EXISTS evidence_checkpoints_no_update BEFORE UPDATE ON evidence_checkpoints BEGIN SELECT RAISE(ABORT, 'evidence checkpoints are append-only'); END`,
      `CREATE TRIGGER IF NOT EXISTS evidence_checkpoints_no_delete BEFORE DELETE ON evidence_checkpoints BEGIN SELECT RAISE(ABORT, 'evidence checkpoints are append-only'); END`,
    ],
    postgres: [
      `CREATE OR REPLACE FUNCTION evidence_checkpoints_append_only() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'evidence checkpoints are append-only'; END $$ LANGUAGE plpgsql`,
      `DROP TRIGGER IF EXISTS evidence_checkpoints_no_change ON evidence_checkpoints`,
      `CREATE TRIGGER evidence_checkpoints_no_change BEFORE UPDATE OR DELETE ON evidence_checkpoints FOR EACH ROW EXECUTE FUNCTION evidence_checkpoints_append_only()`,
    ],
  },
  {
    // sessions (auth/session-backend.ts): any replica serves any signed-in browser, and a restart signs
    // nobody out. The key is the SHA-256 of the cookie value, never the value.
    id: 5,
    sql: [
      `CREATE TABLE IF NOT EXISTS sessions (
        key TEXT PRIMARY KEY,
        user_source TEXT NOT NULL,
        user_name TEXT NOT NULL,
        doc TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_seen BIGINT NOT NULL
      )`,
      'CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user_source, user_name)',
      'CREATE INDEX IF NOT EXISTS sessions_last_seen ON sessions (last_seen)',
    ],
  },
  {
    // a freeze's details change by compare-and-set on this version (freeze/store.ts modify): an extension and an
    // out-of-band record written at once both stay
    id: 6,
    sql: ['ALTER TABLE freezes ADD COLUMN version INTEGER NOT NULL DEFAULT 0'],
  },
  {
    // the claim of a freeze's end (freeze/claim.ts): the process ending it renews claimed_until every few seconds,
    // and every write it makes names claim_token (fencing); another replica takes over only a claim left to expire
    id: 7,
    sql: [
      'ALTER TABLE freezes ADD COLUMN claimed_by TEXT',
      'ALTER TABLE freezes ADD COLUMN claim_token TEXT',
      'ALTER TABLE freezes ADD COLUMN claimed_until TEXT',
    ],
  },
  {
    // people, not names (prune/identity.ts): the person behind a preview's requester and each decision, one
    // decision per person per preview, and the decisions being recorded (prune/store.ts hold: only a decision
    // that will count gets its intent recorded). Rows from before keep a NULL person (compared as then).
    id: 8,
    sql: [
      'ALTER TABLE prune_previews ADD COLUMN requester_person TEXT',
      'ALTER TABLE prune_approvals ADD COLUMN person TEXT',
      'CREATE UNIQUE INDEX IF NOT EXISTS prune_approvals_person ON prune_approvals (preview_id, person)',
      `CREATE TABLE IF NOT EXISTS prune_decision_holds (
        preview_id TEXT NOT NULL REFERENCES prune_previews (id),
        person TEXT NOT NULL,
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        name TEXT NOT NULL,
        decision TEXT NOT NULL,
        taken_at BIGINT NOT NULL,
        PRIMARY KEY (preview_id, person)
      )`,
    ],
  },
  {
    // event sinks (sinks/sink-store.ts): how far each sink has heard the chain, and the records it never took
    id: 9,
    sql: [
      'CREATE TABLE IF NOT EXISTS sink_cursors (sink TEXT PRIMARY KEY, seq BIGINT NOT NULL, updated_at TEXT NOT NULL)',
      `CREATE TABLE IF NOT EXISTS sink_dead_letters (
        sink TEXT NOT NULL,
        seq BIGINT NOT NULL,
        attempts INTEGER NOT NULL,
        last_error TEXT NOT NULL,
        first_failed_at TEXT NOT NULL,
        dead_at TEXT NOT NULL,
        PRIMARY KEY (sink, seq)
      )`,
    ],
  },
  {
    // the masked render of every recorded release, one copy per render hash (store/manifest-store.ts): gzip,
    // base64 (one portable column type); the hash in the chain proves the bytes
    id: 10,
    sql: [
      `CREATE TABLE IF NOT EXISTS release_manifests (
        render_hash TEXT PRIMARY KEY,
        objects INTEGER NOT NULL,
        bytes BIGINT NOT NULL,
        stored_bytes BIGINT NOT NULL,
        stored_at TEXT NOT NULL,
        body TEXT NOT NULL
      )`,
    ],
  },
  {
    // notifications (notify/prefs-store.ts): the kinds a person chose not to hear (default: every kind of theirs)
    id: 11,
    sql: [
      `CREATE TABLE IF NOT EXISTS notification_optouts (
        person TEXT NOT NULL,
        kind TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (person, kind)
      )`,
    ],
  },
  {
    // manifest retention (store/manifest-store.ts): when a render was last recorded (a release made of it, or
    // found present), and when the retention setting expired it (the row stays as a tombstone: no body)
    id: 12,
    sql: [
      'ALTER TABLE release_manifests ADD COLUMN last_used_at TEXT',
      'ALTER TABLE release_manifests ADD COLUMN expired_at TEXT',
    ],
  },
  {
    // sign-in throttles (auth/attempt-store.ts): one count per key and window for every replica; the key is a
    // SHA-256 (people type passwords into the user name box), rows past their window are swept
    id: 13,
    sql: [
      `CREATE TABLE IF NOT EXISTS auth_attempts (
        key TEXT PRIMARY KEY,
        count INTEGER NOT NULL,
        reset_at BIGINT NOT NULL
      )`,
      'CREATE INDEX IF NOT EXISTS auth_attempts_reset ON auth_attempts (reset_at)',
    ],
  },
  {
    // intents whose outcome is not recorded yet (evidence/open-intents.ts): a row renewed by the process acting; a
    // row nobody renews belongs to a process that stopped, and its intent gets `action.interrupted`
    id: 14,
    sql: [
      `CREATE TABLE IF NOT EXISTS open_intents (
        seq BIGINT PRIMARY KEY,
        type TEXT NOT NULL,
        replica TEXT NOT NULL,
        alive_at BIGINT NOT NULL
      )`,
    ],
  },
  {
    // one row the evidence recorder writes to learn that the store takes writes again (a full disk read fine all
    // along): EvidenceStore.probeWrite
    id: 15,
    sql: ['CREATE TABLE IF NOT EXISTS store_probe (id INTEGER PRIMARY KEY, at BIGINT NOT NULL)'],
  },
  {
    // planned freeze windows (issue 43, decision 0024; src/server/freeze): the windows, and each occurrence the
    // scheduler started (primary key: once per window and start, whichever replica holds the Lease) with the apps
    // it has frozen or extended so far (a new holder carries on with the others)
    id: 16,
    sql: [
      `CREATE TABLE IF NOT EXISTS freeze_windows (
        name TEXT PRIMARY KEY,
        spec TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        deleted_at TEXT,
        deleted_by TEXT,
        delete_reason TEXT
      )`,
      `CREATE TABLE IF NOT EXISTS window_occurrences (
        window_name TEXT NOT NULL,
        starts_at BIGINT NOT NULL,
        ends_at BIGINT NOT NULL,
        started_by TEXT NOT NULL,
        apps TEXT NOT NULL,
        PRIMARY KEY (window_name, starts_at)
      )`,
    ],
  },
  {
    // break-glass through a planned window (issue 43, decision 0026; src/server/freeze/break-glass*.ts): one row per
    // request, its approval by a second person and its end; at most one open (requested or approved) per app and
    // occurrence (the partial unique index), so two requests or two approvals cannot both stand
    id: 17,
    sql: [
      `CREATE TABLE IF NOT EXISTS window_break_glass (
        id TEXT PRIMARY KEY,
        window_name TEXT NOT NULL,
        starts_at BIGINT NOT NULL,
        ends_at BIGINT NOT NULL,
        app TEXT NOT NULL,
        cluster TEXT NOT NULL,
        env TEXT NOT NULL,
        reason TEXT NOT NULL,
        minutes INTEGER NOT NULL,
        requested_by TEXT NOT NULL,
        requester TEXT NOT NULL,
        requested_at TEXT NOT NULL,
        state TEXT NOT NULL,
        approved_by TEXT,
        approved_at TEXT,
        until_at BIGINT,
        ended_at TEXT,
        note TEXT
      )`,
      `CREATE UNIQUE INDEX IF NOT EXISTS window_break_glass_open ON window_break_glass (window_name, starts_at, app) WHERE state IN ('requested', 'approved')`,
      // "a window starts within the hour", announced once per occurrence whichever replica holds the Lease
      `CREATE TABLE IF NOT EXISTS window_reminders (
        window_name TEXT NOT NULL,
        starts_at BIGINT NOT NULL,
        announced_by TEXT NOT NULL,
        PRIMARY KEY (window_name, starts_at)
      )`,
    ],
  },
];
