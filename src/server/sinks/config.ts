// Event sinks (issue 28): HTTP endpoints that hear the console's evidence as CDEvents. Configured by a JSON file
// (CONSOLE_EVENT_SINKS_FILE), each with a signing secret read from its own file (never logged, never sent):
//   { "sinks": [ { "name": "audit", "url": "https://events.example.com/cdevents",
//                  "secretFile": "/etc/console/audit-hmac", "deadLetterAfterSeconds": 600, "from": "now" } ] }
// (and optionally "retryMaxSeconds": the longest wait between two attempts at a record, 30 by default).
// A sink with `"format": "slack"` or `"json"` hears notifications instead (domain/notifications.ts: who must act,
// as a Slack-compatible webhook body or generic JSON), optionally only the kinds in `"notify"`.
import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { NOTIFICATION_KINDS, type NotificationKind } from '../../domain/notifications.ts';

export const SINK_FORMATS = ['cdevents', 'slack', 'json'] as const;
export type SinkFormat = (typeof SINK_FORMATS)[number];

export interface SinkConfig {
  name: string;
  url: string;
  /** the HMAC-SHA256 key: the file's content, trimmed */
  secret: string;
  /** a record that still fails this long after its first attempt goes to the dead-letter list */
  deadLetterAfterMs: number;
  /** the back-off's longest wait between two attempts at a record (retryMaxSeconds); unset: the delivery's (30 s) */
  retryMaxMs?: number;
  /** where a sink with no cursor yet starts: the chain's head ("now", default) or its first record ("start") */
  from: 'now' | 'start';
  /** CDEvents (every governance record), or notifications as a Slack-compatible or generic JSON body */
  format: SinkFormat;
  /** a notifications sink: the kinds it sends (every kind by default); empty for a CDEvents sink */
  notify: NotificationKind[];
}

const SinkFile = z.object({
  sinks: z
    .array(
      z
        .object({
          name: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a lower-case DNS label'),
          url: z.url({ protocol: /^https?$/ }),
          secretFile: z.string().min(1),
          deadLetterAfterSeconds: z
            .number()
            .int()
            .min(1)
            .max(7 * 86_400)
            .default(600),
          retryMaxSeconds: z.number().int().min(1).max(3600).optional(),
          from: z.enum(['now', 'start']).default('now'),
          format: z.enum(SINK_FORMATS).default('cdevents'),
          notify: z.array(z.enum(NOTIFICATION_KINDS)).min(1).optional(),
        })
        .refine((s) => s.format !== 'cdevents' || !s.notify, {
          message: 'notify is for a notifications sink (format slack or json)',
          path: ['notify'],
        }),
    )
    .max(20),
});

export function loadSinks(file: string | undefined): SinkConfig[] {
  if (!file) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`CONSOLE_EVENT_SINKS_FILE ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const parsed = SinkFile.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `CONSOLE_EVENT_SINKS_FILE ${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const names = new Set<string>();
  return parsed.data.sinks.map((s) => {
    if (names.has(s.name)) throw new Error(`CONSOLE_EVENT_SINKS_FILE ${file}: sink ${s.name} twice`);
    names.add(s.name);
    let secret: string;
    try {
      // owner and group may read it (a mounted Secret is 0440 in the chart); anyone else may not
      if ((statSync(s.secretFile).mode & 0o007) !== 0) throw new Error('readable by anyone (chmod 640 or tighter)');
      secret = readFileSync(s.secretFile, 'utf8').trim();
    } catch (e) {
      throw new Error(`sink ${s.name}: secret file ${s.secretFile}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (secret.length < 16)
      throw new Error(`sink ${s.name}: the secret in ${s.secretFile} is shorter than 16 characters`);
    return {
      name: s.name,
      url: s.url,
      secret,
      deadLetterAfterMs: s.deadLetterAfterSeconds * 1000,
      ...(s.retryMaxSeconds === undefined ? {} : { retryMaxMs: s.retryMaxSeconds * 1000 }),
      from: s.from,
      format: s.format,
      notify: s.format === 'cdevents' ? [] : (s.notify ?? [...NOTIFICATION_KINDS]),
    };
  });
}
