// The notifications capability's public face (issue 28): the sinks' notification bodies, the freeze reminder and
// each person's choices. Its routes are registered by app.ts directly.
export { NotificationPrefs } from './prefs-store.ts';
export { FreezeReminder } from './reminder.ts';
export { Notifier } from './renderer.ts';
