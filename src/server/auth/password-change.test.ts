// A malformed password change says what is wrong (issue 40), not "needs at least 12 characters" for every body.
import { describe, expect, it } from 'vitest';
import { passwordChangeProblem } from './routes.ts';

describe('passwordChangeProblem', () => {
  it('names the field and the problem', () => {
    expect(passwordChangeProblem(undefined)).toBe('send a JSON object {"current": "…", "next": "…"}');
    expect(passwordChangeProblem(['x'])).toBe('send a JSON object {"current": "…", "next": "…"}');
    expect(passwordChangeProblem({ next: 'long enough password' })).toBe('current: the current password is missing');
    expect(passwordChangeProblem({ current: 'x' })).toBe('next: the new password is missing');
    expect(passwordChangeProblem({ current: 'x', next: 'short' })).toBe(
      'next: the new password needs at least 12 characters',
    );
    expect(passwordChangeProblem({ current: 'x', next: 'n'.repeat(1025) })).toBe('next: at most 1,024 characters');
    expect(passwordChangeProblem({ current: 'c'.repeat(1025), next: 'long enough password' })).toBe(
      'current: at most 1,024 characters',
    );
  });
});
