import { describe, expect, it } from 'vitest';
import { emptyRenderText } from './app-diff.tsx';

describe('the empty-render banner', () => {
  it('says "the render is empty" and the override once, with the plan’s reason', () => {
    const text = emptyRenderText([
      'the render is empty: all 9 objects the app manages would be deleted (an empty directory, a failed generator or a wrong path look like this)',
    ]);
    expect(text).toBe(
      'The render is empty: every object this app tracks is extraneous — all 9 objects the app manages would be deleted (an empty directory, a failed generator or a wrong path look like this). A prune preview would need an override.',
    );
    expect(text.match(/render is empty/gi)).toHaveLength(1);
    expect(text.match(/override/gi)).toHaveLength(1);
    expect(emptyRenderText([])).toBe(
      'The render is empty: every object this app tracks is extraneous. A prune preview would need an override.',
    );
  });
});
