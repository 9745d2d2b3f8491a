import { useQuery } from '@tanstack/react-query';
import { can, whyNot, type Action, type Scope } from '../../domain/access.ts';
import { sessionQueryOptions } from './session.ts';

/** Whether the signed-in user may do `action` here, and why not. The BFF decides; this only explains. */
export function usePermission(action: Action, scope: Scope): { allowed: boolean; reason?: string } {
  const s = useQuery(sessionQueryOptions());
  const grants = s.data?.user.grants ?? [];
  if (can(grants, action, scope)) return { allowed: true };
  return { allowed: false, reason: s.data ? whyNot(grants, action, scope) : 'not signed in' };
}
