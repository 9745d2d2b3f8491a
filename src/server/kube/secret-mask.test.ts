import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  loadMaskKey,
  MASK_KEY_FILE,
  maskSecrets,
  maskSecretsInText,
  maskValue,
  MIN_MASKED_TEXT_LENGTH,
} from './secret-mask.ts';

const LAST = 'kubectl.kubernetes.io/last-applied-configuration';

describe('maskSecrets', () => {
  const s = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', annotations: { [LAST]: '{"stringData":{"password":"hunter2"}}', team: 'core' } },
    data: { password: Buffer.from('hunter2').toString('base64'), user: Buffer.from('app').toString('base64') },
    stringData: { token: 'tok-123' },
  };
  const m = maskSecrets(s);
  const text = JSON.stringify(m);
  it('masks data, stringData and the last-applied annotation; keeps other metadata', () => {
    for (const leak of [
      'hunter2',
      Buffer.from('hunter2').toString('base64'),
      'tok-123',
      Buffer.from('app').toString('base64'),
    ])
      expect(text).not.toContain(leak);
    expect(m.metadata.annotations.team).toBe('core');
    expect(m.metadata.annotations[LAST]).toMatch(/^<secret [0-9a-f]{12}>$/);
  });
  it('gives the same mask to the same value and different masks to different values', () => {
    expect(maskSecrets({ ...s }).data.password).toBe(m.data.password);
    expect(m.data.password).not.toBe(m.data.user);
    expect(maskValue('a')).not.toBe(maskValue('b'));
  });
  it('masks invalid Secrets (data not a map) instead of passing them through', () => {
    const bad = maskSecrets({ kind: 'Secret', metadata: { name: 'x' }, data: 'c2VjcmV0', stringData: ['s3cret'] });
    expect(JSON.stringify(bad)).not.toMatch(/c2VjcmV0|s3cret/);
  });
  it('masks Secrets inside a List and leaves other kinds alone', () => {
    const list = maskSecrets({ kind: 'List', items: [s, { kind: 'ConfigMap', data: { a: 'visible' } }] });
    expect(JSON.stringify(list)).not.toContain('hunter2');
    expect(JSON.stringify(list)).toContain('visible');
  });
});

describe('maskSecretsInText (error text on its way to a user)', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db' },
    data: { password: b64('hunter22'), cert: b64('-----BEGIN X-----\nMIIBlineone\nMIIBlinetwo\n-----END X-----\n') },
    stringData: { token: 'tok-12345', pin: 'abc' },
  };

  it('replaces known values, base64 and decoded, with the mask the diff shows for them', () => {
    const text = `Secret "db" is invalid: data[password]: "hunter22" (${b64('hunter22')}); token tok-12345; ${b64('tok-12345')}`;
    const out = maskSecretsInText(text, [secret]);
    for (const leak of ['hunter22', b64('hunter22'), 'tok-12345', b64('tok-12345')]) expect(out).not.toContain(leak);
    // the same mask as maskSecrets gives the field, so the user can tie the error to the diff
    expect(out).toContain(maskSecrets(secret).data.password);
    expect(out).toContain(maskSecrets(secret).stringData.token);
    expect(out).toContain('Secret "db" is invalid: data[password]');
  });

  it('finds one line of a multi-line value and a JSON-escaped value', () => {
    const out = maskSecretsInText('bad PEM near MIIBlinetwo; value "-----BEGIN X-----\\nMIIBlineone', [secret]);
    expect(out).not.toMatch(/MIIBlineone|MIIBlinetwo/);
  });

  it(`leaves values shorter than ${MIN_MASKED_TEXT_LENGTH} characters alone (they are everywhere in plain text)`, () => {
    expect(maskSecretsInText('abc is not a secret worth hiding', [secret])).toBe('abc is not a secret worth hiding');
  });

  it('never masks inside a mask it put in, and leaves text without Secrets unchanged', () => {
    const s = { kind: 'Secret', stringData: { a: 'secret', b: 'a secret value' } };
    const out = maskSecretsInText('x a secret value y secret z', [s]);
    expect(out).toBe(`x ${maskValue('a secret value')} y ${maskValue('secret')} z`);
    expect(
      maskSecretsInText('kustomize: missing.yaml not found', [{ kind: 'ConfigMap', data: { a: 'missing' } }]),
    ).toBe('kustomize: missing.yaml not found');
  });

  it('masks by shape what nobody knew: YAML under data:/stringData:, flow maps, JSON, Go map dumps', () => {
    const yaml = [
      'error: template: x.yaml:3: values in excerpt',
      'kind: Secret',
      'data:',
      '  password: aHVudGVyMg==',
      '  "api-key": "s3cr3t-key"',
      '  cert: |',
      '    MIIBsecretline',
      'stringData:',
      '  token: plain-token',
      'metadata:',
      '  name: visible-name',
    ].join('\n');
    const out = maskSecretsInText(yaml);
    for (const leak of ['aHVudGVyMg==', 's3cr3t-key', 'MIIBsecretline', 'plain-token']) expect(out).not.toContain(leak);
    expect(out).toContain('visible-name');
    expect(out).toContain(`password: ${maskValue('aHVudGVyMg==')}`);
    const item = maskSecretsInText('items:\n  - data:\n      k: hidden-value\n    kind: Secret');
    expect(item).not.toContain('hidden-value');
    expect(item).toContain('kind: Secret');
    for (const line of [
      '{"kind":"Secret","data":{"password":"aHVudGVyMg==","user":"YXBw"}}',
      'stringData: {token: plain-token, other: "two words"}',
      'map[string]interface {}{"data":map[string]interface {}{"password":"aHVudGVyMg=="}}',
      'map[data:map[password:aHVudGVyMg== user:YXBw] kind:Secret]',
    ]) {
      const o = maskSecretsInText(line);
      expect(o).not.toMatch(/aHVudGVyMg==|YXBw|plain-token|two words/);
      expect(o).toMatch(/<secret [0-9a-f]{12}>/);
    }
  });

  it('masks credentials in URLs', () => {
    expect(maskSecretsInText("fatal: unable to access 'https://bot:ghp_tok3n@git.example/x.git/'")).toBe(
      "fatal: unable to access 'https://<credentials>@git.example/x.git/'",
    );
  });
});

describe('loadMaskKey: one key per data directory, owner-only, kept across restarts', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'mask-key-'));
    dirs.push(d);
    return join(d, 'data');
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('creates the key 0600 in a 0700 directory and gives the same masks after a restart', () => {
    const dir = tmp();
    loadMaskKey(dir);
    const before = maskValue('a');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, MASK_KEY_FILE)).mode & 0o777).toBe(0o600);
    loadMaskKey(tmp()); // another data directory: another key
    expect(maskValue('a')).not.toBe(before);
    loadMaskKey(dir); // "restart" on the first one
    expect(maskValue('a')).toBe(before);
  });

  it('refuses a key file that is not a key', () => {
    const dir = tmp();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, MASK_KEY_FILE), 'not a key');
    expect(() => loadMaskKey(dir)).toThrow(/not a mask key/);
  });
});

describe('CONSOLE_MASK_KEY_FILE (replicas share one key)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'maskfile-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('two processes given the same file mask alike, a data-dir key masks differently; a bad file is refused', () => {
    const file = join(dir, 'shared.key');
    writeFileSync(file, `${'ab'.repeat(32)}\n`);
    loadMaskKey(join(dir, 'a'), file);
    const a = maskValue('hunter2');
    loadMaskKey(join(dir, 'b'), file);
    expect(maskValue('hunter2')).toBe(a);
    loadMaskKey(join(dir, 'own'));
    expect(maskValue('hunter2')).not.toBe(a);
    writeFileSync(join(dir, 'bad.key'), 'not a key');
    expect(() => loadMaskKey(dir, join(dir, 'bad.key'))).toThrow(/not a mask key/);
    expect(() => loadMaskKey(dir, join(dir, 'missing.key'))).toThrow(/CONSOLE_MASK_KEY_FILE/);
  });
});
