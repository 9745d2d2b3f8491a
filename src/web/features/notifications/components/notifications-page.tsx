// Notifications (anyone signed in): the kinds the console sends to the people whose job they are, and a switch
// per kind to stop hearing one. What is sent, and where, is the admins' sinks file; this page only says it.
import { useEffect, useRef, useState } from 'react';
import type { NotificationPref } from '../../../../api/notifications.ts';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import { useNotificationPrefs, useSetNotificationPref } from '../api/notification-queries.ts';

const ROLE_TEXT: Record<string, string> = { reviewer: 'reviewers', oncall: 'on-call', developer: 'developers' };

export function NotificationsPage() {
  useDocumentTitle('Notifications');
  const q = useNotificationPrefs();
  const set = useSetNotificationPref();
  return (
    <section className="grid max-w-3xl gap-4" aria-labelledby="notifications-h">
      <h1 id="notifications-h" className="text-xl font-semibold">
        Notifications
      </h1>
      <p className="text-sm text-slate-600">
        The console tells the people whose job it is: reviewers when a prune preview waits for them, on-call when a
        freeze ends in 15 minutes or its app was changed around it, the app’s team when a release fails its
        verification. Messages carry names, states and a link, never a diff or a secret.
      </p>
      {q.isPending && <p className="text-slate-600">Loading…</p>}
      {q.isError && (
        <p role="alert" className="text-red-800">
          Cannot load your notifications: {q.error.message}
        </p>
      )}
      {q.data && q.data.sinks.length === 0 && (
        <p className="rounded border border-amber-300 bg-amber-50 p-2 text-sm text-amber-900" data-testid="no-sinks">
          No notifications sink is configured, so nothing is sent to anyone yet (an admin adds one with
          {' "format": "slack" '}or{' "json" '}in CONSOLE_EVENT_SINKS_FILE). Your choices below are kept.
        </p>
      )}
      {q.data && q.data.sinks.length > 0 && (
        <p className="text-sm text-slate-600" data-testid="notification-sinks">
          Sent through {q.data.sinks.map((s) => `${s.name} (${s.format === 'slack' ? 'Slack' : 'JSON'})`).join(', ')}.
        </p>
      )}
      {q.data?.viaGroups && (
        <p className="text-sm text-slate-600">
          You signed in with single sign-on: messages name your groups, so opting out here leaves your groups named.
        </p>
      )}
      {set.isError && (
        <p role="alert" className="text-red-800">
          Your choice was not saved: {set.error.message}
        </p>
      )}
      {q.data && (
        <ul className="grid gap-2" aria-label="Notification kinds">
          {q.data.kinds.map((k) => (
            <Kind
              key={k.kind}
              pref={k}
              sentHere={q.data.sinks.some((s) => s.kinds.includes(k.kind))}
              busy={set.isPending}
              onChange={(subscribed, settled) => set.mutate({ kind: k.kind, subscribed }, { onSettled: settled })}
            />
          ))}
        </ul>
      )}
    </section>
  );
}

function Kind(p: {
  pref: NotificationPref;
  sentHere: boolean;
  busy: boolean;
  onChange: (v: boolean, settled: () => void) => void;
}) {
  const k = p.pref;
  // The switch moves in the click's own render: the query cache's optimistic copy lands a tick later, and until
  // then React would put a controlled checkbox back (a person sees it flicker; Playwright saw "did not change").
  const [moving, setMoving] = useState<boolean | undefined>();
  // a later switch's save replaces this one's callbacks (React Query calls only the last mutate's): when no save
  // is running any more, the cache is the truth
  const wasBusy = useRef(false);
  useEffect(() => {
    if (wasBusy.current && !p.busy) setMoving(undefined);
    wasBusy.current = p.busy;
  }, [p.busy]);
  const id = `notify-${k.kind.replace(/\./g, '-')}`;
  return (
    <li
      className="flex items-start gap-3 rounded-lg border border-slate-200 bg-white p-3 shadow-sm"
      data-testid="notification-kind"
      data-kind={k.kind}
    >
      <input
        id={id}
        type="checkbox"
        className="mt-1 h-4 w-4"
        checked={moving ?? k.subscribed}
        disabled={p.busy}
        onChange={(e) => {
          const v = e.currentTarget.checked;
          setMoving(v);
          p.onChange(v, () => setMoving(undefined));
        }}
      />
      <div className="grid gap-0.5">
        <label htmlFor={id} className="font-medium">
          {k.label}
        </label>
        <span className="text-xs text-slate-600">
          For {k.roles.map((r) => ROLE_TEXT[r] ?? r).join(' and ')}
          {k.yours ? ' — that is you' : ' — not your role now (admins hear it when nobody else covers the place)'}
          {p.sentHere ? '' : ' · no sink sends this kind'}
        </span>
      </div>
    </li>
  );
}
