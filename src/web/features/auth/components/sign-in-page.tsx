// Sign-in: local account or OIDC; a first-start one-time password is replaced here.
// The two forms keep their errors inline (meta errors: 'inline'), next to the fields they are about:
// the sign-in page has no other content, a toast would be far from the fields, and there is nothing
// else on the page for the user to do until the form succeeds.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { ApiError } from '../../../lib/api-client.ts';
import { useDocumentTitle } from '../../../lib/document-title.ts';
import { useChangePassword } from '../api/change-password.ts';
import { providersQueryOptions } from '../api/get-providers.ts';
import { useSignIn } from '../api/sign-in.ts';

/** Same-origin paths only (never `//host` or a scheme): no open redirect through ?next=. */
export function safeNext(next: string | null): string {
  return next && /^\/(?![/\\])[^\s\\]*$/.test(next) ? next : '/';
}

const input = 'mt-1 w-full rounded border border-slate-300 px-2 py-1.5 text-sm';

const messageOf = (err: Error | null, fallback: string) =>
  err ? (err instanceof ApiError ? err.message : fallback) : undefined;

export function SignInPage() {
  const [params] = useSearchParams();
  const next = safeNext(params.get('next'));
  useDocumentTitle('Sign in');
  const navigate = useNavigate();
  const qc = useQueryClient();
  const providers = useQuery(providersQueryOptions());
  const signIn = useSignIn();
  const changePassword = useChangePassword();
  const [mismatch, setMismatch] = useState(false);
  const [mustChange, setMustChange] = useState(params.get('change') === '1');
  const [current, setCurrent] = useState('');
  const busy = signIn.isPending || changePassword.isPending;
  const error = mustChange
    ? mismatch
      ? 'the two new passwords differ'
      : messageOf(changePassword.error, 'could not change the password')
    : messageOf(signIn.error, 'sign-in failed');

  const done = async () => {
    await qc.invalidateQueries();
    await navigate(next, { replace: true });
  };

  const onSignIn = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const password = String(f.get('password') ?? '');
    signIn.mutate(
      { username: String(f.get('username') ?? ''), password },
      {
        onSuccess: (s) => {
          if (!s.mustChangePassword) return void done();
          setCurrent(password);
          setMustChange(true);
        },
      },
    );
  };

  const onChange = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const pw = String(f.get('new') ?? '');
    const differ = pw !== String(f.get('repeat') ?? '');
    setMismatch(differ);
    if (differ) return;
    changePassword.mutate({ current: String(f.get('current') ?? current), next: pw }, { onSuccess: () => void done() });
  };

  return (
    <main className="flex min-h-screen items-center justify-center bg-slate-50 p-6">
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
          <form onSubmit={onChange} aria-label="Change password">
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
            <form onSubmit={onSignIn} aria-label="Sign in">
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
    </main>
  );
}
