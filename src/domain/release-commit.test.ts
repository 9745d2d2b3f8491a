// The commit of a release: revisions → shas, `git show` parsing, the review state read from the commit; and
// the credential-free source URL the release evidence names.
import { describe, expect, it } from 'vitest';
import { parseGitShow, reviewFromCommit, shaOf } from './release-commit.ts';
import { withoutUserInfo } from './url-credentials.ts';

const SHA = 'a'.repeat(40);

describe('revisions and URLs', () => {
  it('reads the commit sha of Flux and Argo CD revisions', () => {
    expect(shaOf(`main@sha1:${SHA}`)).toBe(SHA);
    expect(shaOf(`sha1:${SHA}`)).toBe(SHA);
    expect(shaOf(SHA)).toBe(SHA);
    expect(shaOf('HEAD')).toBeUndefined();
    expect(shaOf('main@sha1:abc')).toBeUndefined();
    expect(shaOf(undefined)).toBeUndefined();
  });
  it('drops credentials from URLs', () => {
    expect(withoutUserInfo('https://user:tok@git.example.com/r.git')).toBe('https://git.example.com/r.git');
    expect(withoutUserInfo('http://127.0.0.1:1/r.git')).toBe('http://127.0.0.1:1/r.git');
  });
});

describe('git show', () => {
  it('parses the commit fields and the signature status', () => {
    const out = [
      SHA,
      'Ann',
      'ann@x',
      '2026-01-01T10:00:00+00:00',
      'Cid',
      'cid@x',
      '2026-01-01T10:01:00+00:00',
      'N',
      '',
      'p1 p2',
      'Subject line\n\nBody\n',
    ].join('\0');
    const c = parseGitShow(out);
    expect(c).toMatchObject({
      sha: SHA,
      author: { name: 'Ann', email: 'ann@x' },
      committer: { name: 'Cid', time: '2026-01-01T10:01:00+00:00' },
      signature: { status: 'none', code: 'N' },
      parents: ['p1', 'p2'],
      subject: 'Subject line',
      message: 'Subject line\n\nBody',
    });
    expect(parseGitShow(out.replace('\0N\0', '\0G\0')).signature.status).toBe('verified');
    expect(parseGitShow(out.replace('\0N\0', '\0E\0')).signature.status).toBe('unverified');
    expect(() => parseGitShow('garbage')).toThrow(/unreadable/);
  });
});

describe('review without a forge', () => {
  // a merge commit or a trailer is what the commit claims: its own author can write both, so never ok
  it.each([
    ['a merge commit only', { parents: ['a', 'b'], message: 'Merge pull request #3' }, true, []],
    [
      'a trailer naming someone else',
      { parents: ['a'], message: 'fix\n\nReviewed-by: Rita Reviewer <rita@example.com>' },
      false,
      ['Rita Reviewer'],
    ],
    ['a direct push', { parents: ['a'], message: 'hotfix' }, false, []],
    ['trailers, deduplicated', { parents: ['a'], message: 'x\nApproved-by: sam\nreviewed-by: sam' }, false, ['sam']],
  ] as const)('%s → unknown', (_, c, merge, trailers) => {
    const r = reviewFromCommit({ parents: [...c.parents], message: c.message });
    expect(r.status).toBe('unknown');
    expect(r.reviewed).toBe(false);
    expect(r.reason).toBe('no forge configured: a commit message cannot prove a review');
    expect(r.merge).toBe(merge);
    expect(r.trailers).toEqual(trailers);
  });
});
