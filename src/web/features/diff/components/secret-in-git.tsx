// A Secret as Git holds it (issue 26): SOPS-encrypted (for whom, MAC) or plaintext (flagged: the file and the
// keys, never a value), and per key whether the live Secret has it. The values stay masked, as everywhere.
import type { DiffResponse, ObjectDiffDto } from '../../../../api/schemas.ts';
import { describeSops, plaintextInGit } from '../../../../domain/secrets-in-git.ts';

export function SecretInGit({ secret }: { secret: NonNullable<ObjectDiffDto['secret']> }) {
  const plaintext = secret.keys.filter((k) => k.git === 'plaintext');
  return (
    <div className="border-t border-slate-100 px-2 py-1 text-xs" data-testid="secret-in-git">
      {secret.sops ? (
        <p className="text-emerald-900" data-testid="secret-encryption">
          {describeSops(secret.sops)}
          {secret.file ? ` · ${secret.file}` : ''}
        </p>
      ) : null}
      {plaintext.length > 0 && (
        <p className="font-medium text-red-800" role="alert" data-testid="secret-plaintext">
          Plaintext in Git{secret.generator ? ' (a kustomize secretGenerator)' : ''}: {secret.file ?? 'file not found'}{' '}
          — key{plaintext.length > 1 ? 's' : ''} {plaintext.map((k) => k.key).join(', ')}. Anyone who can read the
          repository can read {plaintext.length > 1 ? 'these values' : 'this value'}.
        </p>
      )}
      <table className="mt-1 text-left" data-testid="secret-keys">
        <thead>
          <tr className="text-slate-500 [&>th]:pr-4">
            <th scope="col">Key</th>
            <th scope="col">Git</th>
            <th scope="col">Live</th>
          </tr>
        </thead>
        <tbody>
          {secret.keys.map((k) => (
            <tr key={k.key} className="[&>td]:pr-4" data-testid="secret-key" data-key={k.key}>
              <td className="font-mono">{k.key}</td>
              <td className={k.git === 'plaintext' ? 'text-red-800' : 'text-emerald-900'}>{k.git}</td>
              <td>{k.live}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The app-level flag: the render's Secrets whose values Git holds in plaintext. */
export function PlaintextSecretsBanner({ render }: { render: DiffResponse['render'] }) {
  const found = plaintextInGit(render?.secretsInGit ?? []);
  if (!found.length) return null;
  return (
    <div role="alert" className="mb-2 rounded bg-red-50 p-2 text-sm text-red-900" data-testid="plaintext-secrets">
      <strong>Secret values committed in plaintext:</strong>{' '}
      {found.map((f) => `${f.file ?? f.secret} (${f.keys.join(', ')})`).join('; ')}. Encrypt them (SOPS) or move them
      out of Git, and rotate the values.
    </div>
  );
}
