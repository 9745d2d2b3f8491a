// One measurement of the tree benchmark (bench/tree.ts): the BFF's tree responses (whole, first window, filter),
// then in Chromium navigation → first row, expand, "Show more", a filter keystroke, 100 live Pod updates, the
// longest main-thread task and the JS heap; printed as one block.
import type { chromium } from 'playwright-core';
import type { spawnBff } from '../test/support/bff-process.ts';
import type { ClusterConnection } from '../src/server/kube/connection.ts';
import { waitFor } from '../sandbox/procs.ts';
import { NS } from './tree-apps.ts';

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

export async function measureTree(
  ctx: Ctx,
  id: string,
  size: number,
  title: (total: number) => string,
  /** the app's own Pods (the namespace holds both apps) */
  podPrefix: string,
): Promise<void> {
  const { base, auth, browser, bff, conn } = ctx;
  const treeUrl = `${base}/api/apps/${id}/tree`;
  await waitFor(
    'tree complete in the BFF cache',
    async () => {
      const r = (await (await fetch(treeUrl, auth)).json()) as { summary?: { total: number } };
      return (r.summary?.total ?? 0) >= size * 0.98;
    },
    { timeoutMs: 300_000, intervalMs: 2000 },
  );
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    bytes = (await (await fetch(treeUrl, auth)).arrayBuffer()).byteLength;
    times.push(performance.now() - t);
  }
  const summary = (
    (await (await fetch(treeUrl, auth)).json()) as {
      summary: { total: number; counts: Record<string, number> };
    }
  ).summary;
  const total = summary.total;
  // what the page asks for first: a window of the first two levels (200 per sibling set)
  const winTimes: number[] = [];
  let winBytes = 0;
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    winBytes = (await (await fetch(`${treeUrl}?window=200&depth=1`, auth)).arrayBuffer()).byteLength;
    winTimes.push(performance.now() - t);
  }
  const filterTimes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await (await fetch(`${treeUrl}?window=200&depth=1&q=${podPrefix}1&limit=1000`, auth)).arrayBuffer();
    filterTimes.push(performance.now() - t);
  }

  const page = await (await browser.newContext({ storageState: bff.storageState })).newPage();
  await page.addInitScript(() => {
    (window as unknown as { __long: number[] }).__long = [];
    new PerformanceObserver((l) =>
      l.getEntries().forEach((e) => (window as unknown as { __long: number[] }).__long.push(e.duration)),
    ).observe({ type: 'longtask', buffered: true });
  });
  const nav0 = Date.now();
  await page.goto(`${base}/apps/${id}`);
  await page.getByTestId('tree-row').first().waitFor();
  const firstPaint = Date.now() - nav0;
  const inPage = <T>(fn: () => Promise<T>) => page.evaluate(fn);
  const windowed = (await page.getByTestId('tree-window-note').count()) > 0;
  const heapOf = () =>
    page.evaluate(
      () => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0,
    );
  const heapFirst = await heapOf();
  const expandMs = await (async () => {
    const t = Date.now();
    if (windowed) {
      // a windowed tree loads a node's children when it is expanded: open the first ReplicaSet
      await page.getByRole('button', { name: 'collapse', exact: true }).last().click();
      await page
        .locator('[data-testid="tree-row"][data-kind="Deployment"]')
        .first()
        .getByRole('button', { name: 'expand' })
        .click();
      await page
        .locator('[data-testid="tree-row"][data-kind="ReplicaSet"]')
        .first()
        .getByRole('button', { name: 'expand' })
        .click();
    } else await page.getByRole('button', { name: 'expand all', exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="tree-row"][data-kind="Pod"]').length > 0);
    await inPage(() => new Promise((r) => requestAnimationFrame(() => r(null))));
    return Date.now() - t;
  })();
  // windowed: "Show more" at the roots, five times (the next 200 Deployments with their ReplicaSets each)
  const moreMs: number[] = [];
  let heapMore = 0;
  if (windowed) {
    const rootsMore = page.locator('[data-testid="tree-more"][data-parent=""]');
    for (let i = 0; i < 5; i++) {
      await page.getByTestId('tree-scroller').evaluate((el) => (el.scrollTop = el.scrollHeight));
      if (!(await rootsMore.count())) break;
      // the roots' "Show more" is the last row: scrolled to, as a person would
      await page.getByTestId('tree-scroller').evaluate((el) => (el.scrollTop = el.scrollHeight));
      const before = await rootsMore.getAttribute('aria-label');
      const t = Date.now();
      await rootsMore.getByRole('button').click();
      // done when the row says the next count (not "loading…") and the frame is painted
      await page.waitForFunction((b) => {
        // the new roots come before the row: keep it in view (the list is virtual)
        const sc = document.querySelector('[data-testid="tree-scroller"]');
        if (sc) sc.scrollTop = sc.scrollHeight;
        const l = document.querySelector('[data-testid="tree-more"][data-parent=""]')?.getAttribute('aria-label');
        // gone: every root is loaded
        return !l || (l !== b && !l.startsWith('loading'));
      }, before);
      await inPage(() => new Promise((r) => requestAnimationFrame(() => r(null))));
      moreMs.push(Date.now() - t);
      if (!(await rootsMore.count())) break;
    }
    heapMore = await heapOf();
  }
  const filter = page.getByLabel('Filter resources');
  await filter.click();
  const keyMs = await page.evaluate(async () => {
    const input = document.querySelector('input[aria-label="Filter resources"]') as HTMLInputElement;
    const t = performance.now();
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set;
    setter?.call(input, 'w');
    input.dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now() - t;
  });
  // windowed: the BFF answers the filter from the whole tree; the time until its matches are the rows
  let filterRowsMs = NaN;
  if (windowed) {
    await filter.fill('');
    const t = Date.now();
    await filter.fill(`${podPrefix}1`);
    await page.waitForFunction(
      () =>
        /objects match/.test(document.querySelector('[data-testid="tree-window-note"]')?.textContent ?? '') &&
        !/searching/.test(document.querySelector('[data-testid="tree-window-note"]')?.textContent ?? ''),
    );
    await page.locator('[data-testid="tree-row"][data-kind="Pod"]').first().waitFor();
    filterRowsMs = Date.now() - t;
  }
  await filter.fill('');
  // 100 live updates: 100 concurrent pod patches (real watch events → SSE → tree refetch → re-render)
  // the app's first 100 Pods by name (one page of a LIST: a whole `kubectl get` of 100,000 Pods times out)
  const pods = (
    await conn.json<{ items: Array<{ metadata: { name: string } }> }>(
      'GET',
      `/api/v1/namespaces/${NS}/pods?limit=2000`,
      { timeoutMs: 120_000 },
    )
  ).items
    .map((p) => p.metadata.name)
    .filter((n) => n.startsWith(podPrefix))
    .slice(0, 100);
  const longestBefore = await page.evaluate(() => Math.max(0, ...(window as unknown as { __long: number[] }).__long));
  await page.evaluate(() => ((window as unknown as { __long: number[] }).__long = []));
  const treeResponses: number[] = [];
  page.on('response', (r) => {
    if (r.url().includes('/tree')) treeResponses.push(Date.now());
  });
  const u0 = Date.now();
  await Promise.all(
    pods.map((p) =>
      conn.request('PATCH', `/api/v1/namespaces/${NS}/pods/${p}`, {
        body: JSON.stringify({ metadata: { annotations: { 'bench/touch': String(u0) } } }),
        contentType: 'application/merge-patch+json',
      }),
    ),
  );
  const applied = Date.now();
  await waitFor('tree refetched after the batch', async () => treeResponses.some((t) => t > applied), {
    timeoutMs: 30_000,
    intervalMs: 20,
  });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
  const rendered = Date.now();
  const longDuringUpdates = await page.evaluate(() =>
    Math.max(0, ...(window as unknown as { __long: number[] }).__long),
  );
  const heap = await page.evaluate(
    () => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0,
  );
  const longest = Math.max(longestBefore, longDuringUpdates);
  await page.close();
  console.log(`\n# ${title(total)}`);
  console.log(
    `health of the objects         ${Object.entries(summary.counts)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')}`,
  );
  console.log(
    `BFF GET /tree from cache     p50 ${pct(times, 50).toFixed(1)} ms  p90 ${pct(times, 90).toFixed(1)} ms  (${(bytes / 1024 / 1024).toFixed(1)} MiB)`,
  );
  console.log(
    `BFF GET first window         p50 ${pct(winTimes, 50).toFixed(1)} ms  p90 ${pct(winTimes, 90).toFixed(1)} ms  (${(winBytes / 1024).toFixed(0)} KiB; ?window=200&depth=1)`,
  );
  console.log(`BFF filter of the whole tree p50 ${pct(filterTimes, 50).toFixed(1)} ms (?q=${podPrefix}1)`);
  console.log(
    `navigation → first tree row  ${firstPaint} ms${windowed ? ' (windowed)' : ''}  — target < 2,000 ms: ${firstPaint < 2000 ? 'met' : 'NOT MET'}`,
  );
  console.log(`${windowed ? 'expand a ReplicaSet → Pods ' : 'expand all                  '}  ${expandMs} ms`);
  if (windowed) console.log(`Show more at the roots       ${moreMs.join(', ')} ms (200 Deployments each)`);
  console.log(`filter keystroke → frame     ${keyMs.toFixed(1)} ms`);
  if (windowed) console.log(`filter → BFF's matches shown ${filterRowsMs} ms`);
  console.log(
    `100 live pod updates: apiserver applied them in ${applied - u0} ms; tree refetched and re-rendered ${rendered - applied} ms after the last one (longest task ${longDuringUpdates.toFixed(0)} ms)`,
  );
  console.log(
    `longest main-thread task     ${longest.toFixed(0)} ms (whole session: load, expand, filter, updates) — target < 200 ms: ${longest < 200 ? 'met' : 'NOT MET'}`,
  );
  const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  console.log(
    `JS heap                      ${mib(heap)}${windowed ? ` (after first paint ${mib(heapFirst)}; after ${moreMs.length} × Show more ${mib(heapMore)})` : ''}`,
  );
}

export interface Ctx {
  base: string;
  auth: { headers: { Cookie: string } };
  browser: Awaited<ReturnType<typeof chromium.launch>>;
  bff: Awaited<ReturnType<typeof spawnBff>>;
  conn: ClusterConnection;
}
