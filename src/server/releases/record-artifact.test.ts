// CONSOLE_REGISTRY_MIRRORS: image host → registry base URL the artifact state resolves tags at.
import { describe, expect, it } from 'vitest';
import { parseRegistryMirrors } from './record-artifact.ts';

describe('registry mirrors', () => {
  it('parses host=url pairs, trims them, drops a trailing slash and skips parts without a host', () => {
    expect(parseRegistryMirrors(' r.io = http://mirror:5000/ ,reg:5000=http://m2,=http://x,junk')).toEqual({
      'r.io': 'http://mirror:5000',
      'reg:5000': 'http://m2',
    });
    expect(parseRegistryMirrors(undefined)).toEqual({});
  });
});
