/** What the first load shows while the session and the page's data arrive (index.html has a static copy). */
export function PageSkeleton() {
  return (
    <div className="min-h-screen" aria-busy="true" data-testid="page-skeleton">
      <div className="flex h-12 items-center gap-4 border-b border-slate-200 bg-white px-6">
        <div className="h-5 w-56 animate-pulse rounded bg-slate-200" />
      </div>
      <div className="grid grid-cols-[repeat(auto-fit,minmax(16rem,1fr))] gap-4 p-6">
        {[0, 1, 2].map((i) => (
          <div key={i} className="h-64 animate-pulse rounded-lg bg-slate-100" />
        ))}
      </div>
      <p className="sr-only" role="status">
        Loading the console…
      </p>
    </div>
  );
}
