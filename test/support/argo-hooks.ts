// The seed's Argo CD hook in a test's Application status: ledger-staging's PreSync migration Job as one entry of
// `status.operationState.syncResult.resources`, with the phase (and whatever else) the test gives it.
export const migrateTask = (hookPhase: string, extra: Record<string, string> = {}) => ({
  group: 'batch',
  kind: 'Job',
  namespace: 'staging',
  name: 'ledger-db-migrate',
  syncPhase: 'PreSync',
  hookType: 'PreSync',
  hookPhase,
  ...extra,
});
