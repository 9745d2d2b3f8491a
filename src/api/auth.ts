// Identity: the signed-in session, its grants, and the sign-in providers.
import { z } from 'zod';
import { ROLES } from '../domain/access.ts';

// --- identity ---
export const GrantSchema = z.object({
  role: z.enum(ROLES),
  clusters: z.array(z.string()),
  envs: z.array(z.string()),
});
export const SessionResponse = z.object({
  user: z.object({
    name: z.string(),
    source: z.enum(['local', 'oidc']),
    /** who issued the identity (`console:local`, or the OIDC issuer) and the identity there (account id, `sub`) */
    issuer: z.string().optional(),
    subject: z.string().optional(),
    /** the person behind it: identities linked by a verified email or by an admin share it */
    person: z.string().optional(),
    groups: z.array(z.string()),
    grants: z.array(GrantSchema),
  }),
  csrfToken: z.string(),
  mustChangePassword: z.boolean(),
  expiresAt: z.string(),
  oidc: z.boolean(),
});
export type SessionResponse = z.infer<typeof SessionResponse>;
export const ProvidersResponse = z.object({ local: z.boolean(), oidc: z.boolean() });
