// A person's notification choices (api/notifications.ts): read, and one kind switched at a time.
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  NotificationPrefsResponse,
  type NotificationPrefsResponse as Prefs,
  type SetNotificationPref,
} from '../../../../api/notifications.ts';
import { apiGet, apiSend } from '../../../lib/api-client.ts';

export const notificationKeys = { mine: ['me', 'notifications'] as const };

export const notificationPrefsQueryOptions = () =>
  queryOptions({
    queryKey: notificationKeys.mine,
    queryFn: ({ signal }) => apiGet('/api/me/notifications', NotificationPrefsResponse, { signal }),
  });

export function useNotificationPrefs() {
  return useQuery(notificationPrefsQueryOptions());
}

export function useSetNotificationPref() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: SetNotificationPref) => apiSend('PUT', '/api/me/notifications', NotificationPrefsResponse, v),
    meta: { errors: 'inline' },
    // the switch moves at once; a refusal puts it back (and the page says why)
    onMutate: async (v) => {
      await qc.cancelQueries({ queryKey: notificationKeys.mine });
      const before = qc.getQueryData<Prefs>(notificationKeys.mine);
      if (before)
        qc.setQueryData<Prefs>(notificationKeys.mine, {
          ...before,
          kinds: before.kinds.map((k) => (k.kind === v.kind ? { ...k, subscribed: v.subscribed } : k)),
        });
      return { before };
    },
    onError: (_e, _v, ctx) => {
      if (ctx?.before) qc.setQueryData(notificationKeys.mine, ctx.before);
    },
    onSuccess: (data) => qc.setQueryData(notificationKeys.mine, data),
  });
}
