// @vitest-environment jsdom
// Back puts focus on the card that was opened once the overview renders it again, even when its data arrives
// seconds later (a busy BFF); a user who moves focus meanwhile keeps it; a page that never renders it leaves focus
// on <main>.
import { act, cleanup, render } from '@testing-library/react';
import { useEffect, useRef, useState } from 'react';
import { createMemoryRouter, Outlet, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RESTORE_WAIT_MS, useFocusRestore } from './use-focus-restore.ts';

// jsdom has no CSS.escape; the ids here need none
if (typeof CSS === 'undefined') Object.assign(globalThis, { CSS: { escape: (v: string) => v } });

/** whether the overview's data is there when it mounts, and the setter of its cards once mounted */
let dataAtMount = true;
let showCards: (v: boolean) => void = () => undefined;

function Layout() {
  const main = useRef<HTMLElement>(null);
  useFocusRestore(main);
  return (
    <main ref={main} tabIndex={-1} data-testid="main">
      <button type="button">outside the cards</button>
      <Outlet />
    </main>
  );
}

function Overview() {
  const [cards, setCards] = useState(dataAtMount);
  useEffect(() => {
    showCards = setCards;
  }, []);
  return cards ? (
    <div>
      {['a', 'b'].map((id) => (
        <a key={id} href={`#${id}`} data-app-id={id}>
          {id}
        </a>
      ))}
    </div>
  ) : (
    <p>loading</p>
  );
}

function setup() {
  const router = createMemoryRouter(
    [
      {
        element: <Layout />,
        children: [
          { path: '/', element: <Overview /> },
          { path: '/apps/b', element: <p>app</p> },
        ],
      },
    ],
    { initialEntries: ['/'] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

const card = (id: string) => document.querySelector<HTMLElement>(`[data-app-id="${id}"]`);

/** focuses card `id`, opens an app, then goes Back to an overview whose data is there at once or not yet */
async function openAndGoBack(router: ReturnType<typeof setup>, id: string, dataThere: boolean) {
  dataAtMount = true;
  card(id)?.focus();
  await act(() => router.navigate('/apps/b'));
  expect(document.activeElement?.getAttribute('data-testid')).toBe('main');
  dataAtMount = dataThere;
  await act(async () => {
    await router.navigate(-1);
  });
}

const fakeTimers = () =>
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'requestAnimationFrame', 'cancelAnimationFrame'] });

afterEach(() => {
  dataAtMount = true;
  cleanup();
  vi.useRealTimers();
});

describe('focus on Back', () => {
  it('goes to the opened card when it is rendered at once', async () => {
    await openAndGoBack(setup(), 'b', true);
    expect(document.activeElement).toBe(card('b'));
  });

  it('waits for a card whose data arrives seconds later', async () => {
    fakeTimers();
    await openAndGoBack(setup(), 'b', false);
    // the overview shows "loading": focus waits on <main>
    expect(card('b')).toBeNull();
    expect(document.activeElement?.getAttribute('data-testid')).toBe('main');
    await act(async () => {
      vi.advanceTimersByTime(RESTORE_WAIT_MS - 1_000);
      showCards(true);
    });
    expect(document.activeElement).toBe(card('b'));
  });

  it('leaves focus where the user moved it while waiting, and gives up after the wait', async () => {
    fakeTimers();
    const router = setup();
    await openAndGoBack(router, 'b', false);
    const other = document.querySelector<HTMLElement>('button');
    other?.focus();
    await act(async () => showCards(true));
    expect(document.activeElement).toBe(other);

    // a second round: nobody moves focus, the cards come after the wait
    await openAndGoBack(router, 'a', false);
    await act(async () => {
      vi.advanceTimersByTime(RESTORE_WAIT_MS + 1);
      showCards(true);
    });
    expect(document.activeElement?.getAttribute('data-testid')).toBe('main');
  });
});
