// Who chose not to hear which notifications (migration 11): one row per person and kind they opted out of. A
// person is the "same person" key of auth (accounts.ts personOf), so linked identities share their choices.
import { NOTIFICATION_KINDS, type NotificationKind } from '../../domain/notifications.ts';
import { all, dialectOf, run, type Dialect } from '../store/dialect.ts';

const KINDS = new Set<string>(NOTIFICATION_KINDS);

export class NotificationPrefs {
  private readonly db: Dialect;
  constructor(store: { readonly kind: 'sqlite' | 'postgres' }) {
    this.db = dialectOf(store);
  }

  /** the people who opted out of a kind */
  async optedOut(kind: NotificationKind): Promise<Set<string>> {
    const rows = (await this.db.exec(all('SELECT person FROM notification_optouts WHERE kind = ?', [kind]))) as Array<{
      person: string;
    }>;
    return new Set(rows.map((r) => r.person));
  }

  /** the kinds a person opted out of */
  async of(person: string): Promise<Set<NotificationKind>> {
    const rows = (await this.db.exec(
      all('SELECT kind FROM notification_optouts WHERE person = ?', [person]),
    )) as Array<{ kind: string }>;
    return new Set(rows.map((r) => r.kind).filter((k): k is NotificationKind => KINDS.has(k)));
  }

  async set(person: string, kind: NotificationKind, subscribed: boolean): Promise<void> {
    await this.db.exec(
      subscribed
        ? run('DELETE FROM notification_optouts WHERE person = ? AND kind = ?', [person, kind])
        : run(
            `INSERT INTO notification_optouts (person, kind, at) VALUES (?, ?, ?)
             ON CONFLICT (person, kind) DO NOTHING`,
            [person, kind, new Date().toISOString()],
          ),
    );
  }
}
