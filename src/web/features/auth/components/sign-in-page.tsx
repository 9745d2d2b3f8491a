// Sign-in: local account or OIDC; a first-start one-time password is replaced here.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { ApiError } from '../../../lib/api-client.ts';
import { changePassword, providersQueryOptions, sessionKeys, signIn } from '../api/session-queries.ts';

/** Same-origin paths only (never `//host` or a scheme): no open redirect through ?next=. */
export function safeNext(next: string | null): string {
  return next && /^\/(?![/\\])[^\s\\]*$/.test(next) ? next : '/';
}

const input = 'mt-1 w-full rounded border border-slate-300 px-2 py-1.5 text-sm';

export function SignInPage() {
  const [params] = useSearchParams();
  const next = safeNext(params.get('next'));
  const navigate = useNavigate();
  const qc = useQueryClient();
  const providers = useQuery(providersQueryOptions());
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [mustChange, setMustChange] = useState(params.get('change') === '1');
  const [current, setCurrent] = useState('');

  const done = async () => {
    await qc.invalidateQueries();
    await navigate(next, { replace: true });
  };

  const onSignIn = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const username = String(f.get('username') ?? '');
    const password = String(f.get('password') ?? '');
    setBusy(true);
    setError(undefined);
    try {
      const s = await signIn(username, password);
      qc.setQueryData(sessionKeys.all, s);
      if (s.mustChangePassword) {
        setCurrent(password);
        setMustChange(true);
      } else await done();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'sign-in failed');
    } finally {
      setBusy(false);
    }
  };

  const onChange = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const pw = String(f.get('new') ?? '');
    if (pw !== String(f.get('repeat') ?? '')) return setError('the two new passwords differ');
    setBusy(true);
    setError(undefined);
    try {
      const s = await changePassword(String(f.get('current') ?? current), pw);
      qc.setQueryData(sessionKeys.all, s);
      await done();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'could not change the password');
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="flex min-h-screen items-center justify-center bg-slate-50 p-6">
      <div className="w-full max-w-sm rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <h1 className="mb-4 flex items-center gap-2 text-lg font-semibold text-teal-800">
          <img src="/favicon.svg" alt="" className="h-6 w-6" /> GitOps Governance Console
        </h1>
        {error && (
          <p role="alert" className="mb-3 rounded bg-red-50 px-2 py-1 text-sm text-red-800">
            {error}
          </p>
        )}
        {mustChange ? (
          <form onSubmit={(e) => void onChange(e)} aria-label="Change password">
            <p className="mb-3 text-sm text-slate-600">
              This is a one-time password. Choose your own (at least 12 characters) to continue.
            </p>
            {!current && (
              <label className="mb-2 block text-sm">
                Current password
                <input name="current" type="password" autoComplete="current-password" required className={input} />
              </label>
            )}
            <label className="mb-2 block text-sm">
              New password
              <input name="new" type="password" autoComplete="new-password" minLength={12} required className={input} />
            </label>
            <label className="mb-4 block text-sm">
              Repeat the new password
              <input name="repeat" type="password" autoComplete="new-password" required className={input} />
            </label>
            <button
              type="submit"
              disabled={busy}
              className="w-full rounded bg-teal-700 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50"
            >
              Set password and continue
            </button>
          </form>
        ) : (
          <>
            <form onSubmit={(e) => void onSignIn(e)} aria-label="Sign in">
              <label className="mb-2 block text-sm">
                User name
                <input name="username" autoComplete="username" required className={input} />
              </label>
              <label className="mb-4 block text-sm">
                Password
                <input name="password" type="password" autoComplete="current-password" required className={input} />
              </label>
              <button
                type="submit"
                disabled={busy}
                className="w-full rounded bg-teal-700 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50"
              >
                Sign in
              </button>
            </form>
            {providers.data?.oidc && (
              <a
                href={`/api/auth/oidc/start?next=${encodeURIComponent(next)}`}
                className="mt-3 block w-full rounded border border-slate-300 px-3 py-1.5 text-center text-sm"
              >
                Sign in with single sign-on
              </a>
            )}
          </>
        )}
      </div>
    </div>
  );
}
