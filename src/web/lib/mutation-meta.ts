// What a mutation tells the one error surface (the MutationCache in app/query-client.ts) about itself.

export type ConsoleMutationMeta = {
  /**
   * Where its errors show: 'toast' (default) through the MutationCache, once, for every mutation;
   * 'inline' only for a form that shows its own field errors next to the fields (sign-in, password change).
   */
  errors?: 'toast' | 'inline';
  /** The error toast's title, e.g. "Reconcile failed" (default: "The action failed"). */
  errorTitle?: string;
  /** A success toast, for a result the user would otherwise not see (e.g. after navigating away). */
  successMessage?: string;
};

declare module '@tanstack/react-query' {
  interface Register {
    mutationMeta: ConsoleMutationMeta;
  }
}
