// The bodies of the notifications sinks (sinks/delivery.ts asks for each record): the record's notification
// (domain/notifications.ts), addressed to the accounts and groups whose job it is, less the people who opted
// out; nothing when the sink does not send that kind or nobody is left to hear it.
import { jsonPayload, notificationOf, recipientsOf, slackPayload, type Directory } from '../../domain/notifications.ts';
import type { EvidenceEvent } from '../../domain/evidence.ts';
import type { NotificationRenderer, SinkConfig } from '../sinks/index.ts';
import type { NotificationPrefs } from './prefs-store.ts';

export class Notifier implements NotificationRenderer {
  constructor(
    private readonly o: {
      directory: () => Directory;
      prefs: Pick<NotificationPrefs, 'optedOut'>;
      source: string;
      publicUrl?: string | undefined;
    },
  ) {}

  async render(sink: SinkConfig, e: EvidenceEvent): Promise<Record<string, unknown> | null> {
    if (sink.format === 'cdevents') return null;
    const n = notificationOf(e, { source: this.o.source, publicUrl: this.o.publicUrl });
    if (!n || !sink.notify.includes(n.kind)) return null;
    const r = recipientsOf(n, this.o.directory(), await this.o.prefs.optedOut(n.kind));
    if (!r.users.length && !r.groups.length) return null;
    return sink.format === 'slack' ? slackPayload(n, r) : jsonPayload(n, r);
  }
}
