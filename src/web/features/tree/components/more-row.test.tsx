// @vitest-environment jsdom
// A windowed tree's own rows: what "Show more" says while loading, after an error (and that trying again asks
// again), and what the note says of a filter the BFF capped.
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MoreRowView, WindowedNote } from './more-row.tsx';

afterEach(cleanup);

const row = { more: true as const, id: 'more:rs', parentId: 'rs', depth: 2, loaded: 200, total: 48_000 };
const show = (status: { pending: boolean; error?: string }, onMore = vi.fn()) => {
  render(
    <MoreRowView
      row={row}
      top={0}
      height={30}
      active
      selected={false}
      status={status}
      window={200}
      onSelect={() => undefined}
      onMore={onMore}
    />,
  );
  return onMore;
};

describe('MoreRowView', () => {
  it('offers the next window, says loading while it comes, and says why it failed with a way to try again', () => {
    const onMore = show({ pending: false });
    fireEvent.click(screen.getByRole('button', { name: 'show 200 more (47,800 more of 48,000)' }));
    expect(onMore).toHaveBeenCalledTimes(1);
    cleanup();
    show({ pending: true });
    expect(screen.queryByRole('button')).toBeNull();
    expect(screen.getByRole('status').textContent).toBe('loading 47,800 more of 48,000…');
    cleanup();
    const retry = show({ pending: false, error: 'the BFF answered 503' });
    fireEvent.click(screen.getByRole('button', { name: /cannot load 47,800 more of 48,000: the BFF answered 503/ }));
    expect(retry).toHaveBeenCalledTimes(1);
    cleanup();
    // the BFF's cursor says there is more though the view holds as many as were counted (made since)
    render(
      <MoreRowView
        row={{ ...row, loaded: 48_000 }}
        top={0}
        height={30}
        active
        selected={false}
        status={{ pending: false }}
        window={200}
        onSelect={() => undefined}
        onMore={onMore}
      />,
    );
    fireEvent.click(screen.getByRole('button', { name: 'show more' }));
    expect(onMore).toHaveBeenCalledTimes(2);
  });
});

describe('WindowedNote', () => {
  it('says how much of the tree is loaded, and of a filter how many match in all and that only 1,000 are shown', () => {
    render(<WindowedNote loaded={400} total={100_000} />);
    expect(screen.getByTestId('tree-window-note').textContent).toMatch(/^A large tree: 400 of 100,000 objects/);
    cleanup();
    render(<WindowedNote loaded={1200} total={100_000} filter={{ matched: 5_328, pending: false }} />);
    expect(screen.getByTestId('tree-window-note').textContent).toBe(
      '5,328 of 100,000 objects match (the first 1,000 are shown: narrow the filter)',
    );
    cleanup();
    render(<WindowedNote loaded={0} total={100_000} filter={{ matched: undefined, pending: true }} />);
    expect(screen.getByTestId('tree-window-note').textContent).toBe('Searching all 100,000 objects…');
  });
});
