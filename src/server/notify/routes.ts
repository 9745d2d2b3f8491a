// A person's notification choices (api/notifications.ts). Anyone signed in: a person decides only what they
// hear, keyed by who they are (the person, so linked identities share it), never by a name in the request.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import {
  NotificationPrefsResponse,
  SetNotificationPref,
  type NotificationPrefsResponse as Prefs,
} from '../../api/notifications.ts';
import { NOTIFICATION_KIND_INFO, NOTIFICATION_KINDS } from '../../domain/notifications.ts';
import type { Principal } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { parsed, validated } from '../http/respond.ts';
import { NotificationPrefs } from './prefs-store.ts';

const signedIn = (req: FastifyRequest): Principal => {
  const p = req.principal;
  if (!p) throw new HttpError(401, 'Unauthenticated', 'sign in to continue');
  return p;
};

/** the key of a person's choices: the same person key every "not the same person" rule compares */
export const personKey = (p: Principal) => p.person ?? `${p.issuer ?? p.source}#${p.subject ?? p.name}`;

export const notificationRoutes: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  const prefs = new NotificationPrefs(deps.store);

  const answer = async (p: Principal): Promise<Prefs> => {
    const out = await prefs.of(personKey(p));
    return validated(NotificationPrefsResponse, {
      kinds: NOTIFICATION_KINDS.map((kind) => {
        const roles = NOTIFICATION_KIND_INFO[kind].roles;
        return {
          kind,
          label: NOTIFICATION_KIND_INFO[kind].label,
          roles: [...roles],
          yours: p.grants.some((g) => roles.includes(g.role)),
          subscribed: !out.has(kind),
        };
      }),
      sinks: (deps.sinks?.delivery.sinks() ?? []).flatMap((s) =>
        s.format === 'cdevents' ? [] : [{ name: s.name, format: s.format, kinds: s.notify }],
      ),
      viaGroups: p.source === 'oidc',
    });
  };

  app.get('/api/me/notifications', { config: { access: { signedIn: true } } }, async (req) => answer(signedIn(req)));

  app.put('/api/me/notifications', { config: { access: { signedIn: true } } }, async (req) => {
    const p = signedIn(req);
    const body = parsed(SetNotificationPref, req.body);
    await prefs.set(personKey(p), body.kind, body.subscribed);
    req.log.info({ user: p.name, kind: body.kind, subscribed: body.subscribed }, 'notification choice changed');
    return answer(p);
  });
};
