// Opens the evidence store the configuration names: PostgreSQL with DATABASE_URL, else a SQLite file.
import type { EvidenceStore } from './store.ts';

export async function openEvidenceStore(opts: { databaseUrl?: string; dataDir: string }): Promise<EvidenceStore> {
  if (opts.databaseUrl) {
    const { PostgresEvidenceStore } = await import('./postgres-store.ts');
    return PostgresEvidenceStore.open(opts.databaseUrl);
  }
  const { SqliteEvidenceStore } = await import('./sqlite-store.ts');
  return SqliteEvidenceStore.open(opts.dataDir);
}
