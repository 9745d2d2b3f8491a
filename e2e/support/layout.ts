// The layout never scrolls sideways: a page's document scrollWidth stays within its clientWidth at every width we
// check, light and dark. A table wider than a phone scrolls in its own box (overflow-x-auto) inside the page; long
// unbroken values (sha256 digests, 253-character names) wrap. Used by layout.spec.ts (every page) and by specs of
// pages it does not visit (tryit.spec.ts: /try, which the shared e2e console does not have).
import { expect, type Page } from '@playwright/test';

/** a desktop, a small laptop (1,024: /try's sha256 once widened it) and a phone (390) */
export const WIDTHS = [1440, 1024, 390] as const;
export const SCHEMES = ['light', 'dark'] as const;

/** scrollWidth and clientWidth of the document, and the innermost elements that stick out on the right. */
export async function measure(page: Page) {
  return page.evaluate(() => {
    const root = document.documentElement;
    const limit = root.clientWidth;
    const out = [...document.body.querySelectorAll('*')].filter((el) => el.getBoundingClientRect().right > limit + 1);
    const innermost = out.filter((el) => !out.some((o) => o !== el && el.contains(o)));
    return {
      scrollWidth: root.scrollWidth,
      clientWidth: limit,
      offenders: innermost
        .slice(0, 6)
        .map(
          (el) =>
            `${el.tagName.toLowerCase()}.${String(el.getAttribute('class') ?? '').replace(/\s+/g, '.')}${el.getAttribute('data-testid') ? `[${el.getAttribute('data-testid')}]` : ''} → ${Math.round(el.getBoundingClientRect().right)}`,
        ),
    };
  });
}

/**
 * At each width and colour scheme: `ready` (what the page must show first), then the document must not scroll
 * sideways (a soft assertion: every width and page is reported). Leaves the page at the last width.
 */
export async function expectNoSideScroll(
  page: Page,
  name: string,
  ready: () => Promise<void>,
  { widths = WIDTHS, schemes = SCHEMES }: { widths?: readonly number[]; schemes?: readonly ('light' | 'dark')[] } = {},
) {
  for (const width of widths)
    for (const colorScheme of schemes) {
      await page.setViewportSize({ width, height: 900 });
      await page.emulateMedia({ colorScheme });
      await ready();
      const m = await measure(page);
      console.log(
        `layout ${name} @${width} ${colorScheme}: scrollWidth ${m.scrollWidth} / clientWidth ${m.clientWidth}`,
      );
      expect
        .soft(m.scrollWidth, `${name} at ${width} px (${colorScheme}) scrolls sideways:\n${m.offenders.join('\n')}`)
        .toBeLessThanOrEqual(m.clientWidth);
    }
}
