// The auth capability's public face: what other capabilities and the composition root (app.ts, main.ts)
// may use. Its routes are registered by app.ts directly and never exported here (that would make cycles).
export { AccessReviewer } from './access-review.ts';
export { Accounts, INITIAL_PASSWORD_FILE, LOCAL_ISSUER } from './accounts.ts';
export { allowed, installGuard, recordDenial, type AccessRule } from './guard.ts';
export { appObjectOf, appVisibility, envFilter, withVisibleApps, type EnvFilter } from './env-filter.ts';
export { OidcLogin } from './oidc.ts';
export { identityOf, samePerson, type Identity } from './identity.ts';
export { generatePassword, passwordCostOf } from './passwords.ts';
export { dbCounters, type AttemptCounters } from './attempt-store.ts';
export { DbSessionBackend } from './session-backend.ts';
export { SessionStore, type Principal, type Session } from './sessions.ts';
export { connectionFor, managedCluster } from './user-connection.ts';
