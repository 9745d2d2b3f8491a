// The unit project's set-up: testing-library's async queries (waitFor, findBy…) wait up to 10 s instead of 1 s.
// `npm test` runs the unit tier niced beside the integration tier at load ~10 on two cores, where the first render
// of a page (msw's answer, a lazy route) took longer than 1 s (app-overview, 2026-12-05); a query that never
// matches still fails, at 10 s. Files without a DOM (most of them) skip it and load nothing.
if (typeof document !== 'undefined') {
  const { configure } = await import('@testing-library/dom');
  configure({ asyncUtilTimeout: 10_000 });
}

export {};
