import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { formatGrant } from '../../../../domain/access.ts';
import { sessionQueryOptions } from '../../../lib/session.ts';
import { useSignOut } from '../api/sign-out.ts';

export function UserMenu() {
  const s = useQuery(sessionQueryOptions());
  const signOut = useSignOut();
  const navigate = useNavigate();
  if (!s.data) return null;
  const roles = s.data.user.grants.map(formatGrant);
  return (
    <div className="flex items-center gap-2 text-xs" data-testid="user-menu">
      <span className="font-medium" data-testid="current-user">
        {s.data.user.name}
      </span>
      <span className="text-slate-500">as</span>
      <span className="text-slate-600" data-testid="current-roles" title={s.data.user.groups.join(', ')}>
        {roles.length ? roles.join(' · ') : 'no roles'}
      </span>
      <Link to="/notifications" className="rounded px-1 text-teal-800 underline" data-testid="nav-notifications">
        Notifications
      </Link>
      <button
        type="button"
        className="rounded border border-slate-300 px-2 py-0.5"
        disabled={signOut.isPending}
        onClick={() => signOut.mutate(undefined, { onSettled: () => void navigate('/signin', { replace: true }) })}
      >
        Sign out
      </button>
    </div>
  );
}
