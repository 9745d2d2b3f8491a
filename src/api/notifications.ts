// A person's notifications (issue 28): which kinds they hear, and where notifications go at all.
//   GET /api/me/notifications   the kinds, whether they are the person's job here, and whether they hear them
//   PUT /api/me/notifications   { kind, subscribed }: opt out of (or back into) one kind
import { z } from 'zod';
import { NOTIFICATION_KINDS } from '../domain/notifications.ts';

export const NotificationKindName = z.enum(NOTIFICATION_KINDS);

export const NotificationPref = z.object({
  kind: NotificationKindName,
  label: z.string(),
  /** the roles whose job it is */
  roles: z.array(z.string()),
  /** the person holds one of those roles somewhere (else they would hear it only as an admin nobody else covers) */
  yours: z.boolean(),
  subscribed: z.boolean(),
});
export type NotificationPref = z.infer<typeof NotificationPref>;

export const NotificationPrefsResponse = z.object({
  kinds: z.array(NotificationPref),
  /** the notifications sinks configured (name and format); none: nothing is sent to anyone */
  sinks: z.array(
    z.object({ name: z.string(), format: z.enum(['slack', 'json']), kinds: z.array(NotificationKindName) }),
  ),
  /** SSO users whose groups are addressed cannot be left out one by one: their groups are named instead */
  viaGroups: z.boolean(),
});
export type NotificationPrefsResponse = z.infer<typeof NotificationPrefsResponse>;

export const SetNotificationPref = z.object({ kind: NotificationKindName, subscribed: z.boolean() }).strict();
export type SetNotificationPref = z.infer<typeof SetNotificationPref>;
