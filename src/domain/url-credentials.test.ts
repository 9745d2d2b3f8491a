// The one rule for credentials in URLs: every spelling of user info is cut, including a password that holds `@`
// (URL parsers take the authority's last `@`), and nothing after the host is touched.
import { describe, expect, it } from 'vitest';
import { redactUrlCredentials, withoutUserInfo } from './url-credentials.ts';

describe('redactUrlCredentials', () => {
  it.each([
    ['https://oncall:s3cr3t@git.example.com/x.git', 'https://git.example.com/x.git'],
    ['https://oncall:p@ss@w0rd@git.example.com/x.git', 'https://git.example.com/x.git'],
    ['https://x-access-token:ghs_abc@github.com/o/r', 'https://github.com/o/r'],
    ['HTTPS://u:t@h/x', 'HTTPS://h/x'],
    ['ssh://git:t@h:22/x', 'ssh://h:22/x'],
    ["fatal: unable to access 'https://u:tok@h/x.git/': 403", "fatal: unable to access 'https://h/x.git/': 403"],
    ['postgres://app:pw@db:5432/console and https://a:b@c/d', 'postgres://db:5432/console and https://c/d'],
  ])('%s', (text, want) => {
    expect(redactUrlCredentials(text)).toBe(want);
  });

  it('marks what it cut when asked', () => {
    expect(redactUrlCredentials('https://u:p@ss@h/x', '***')).toBe('https://***@h/x');
  });

  it.each([
    'https://git.example.com/path@v1',
    'https://git.example.com/x?ref=a@b',
    'https://git.example.com/x#a@b',
    'see https://git.example.com, or mail oncall@example.com',
  ])('leaves %s alone', (text) => {
    expect(redactUrlCredentials(text)).toBe(text);
  });
});

describe('withoutUserInfo', () => {
  it.each([
    ['https://u:p%40ss@git.example.com/x.git', 'https://git.example.com/x.git'],
    ['https://u:p@ss@git.example.com/x.git', 'https://git.example.com/x.git'],
    ['http://127.0.0.1:1/r.git', 'http://127.0.0.1:1/r.git'],
    ['not a url https://u:p@ss@h/x', 'not a url https://h/x'],
  ])('%s', (raw, want) => {
    expect(withoutUserInfo(raw)).toBe(want);
  });
});
