// The images of a release: listed from a render, mutable tags flagged, live digests checked, promotion by digest.
import { describe, expect, it } from 'vitest';
import { isMutableImage } from './image.ts';
import { checkLiveDigests, imagesOf, promoted, releaseDigests } from './release-images.ts';

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;

describe('images', () => {
  const deploy = (image: string, init?: string) => ({
    kind: 'Deployment',
    metadata: { name: 'w' },
    spec: {
      template: {
        spec: {
          containers: [{ name: 'c', image }],
          ...(init ? { initContainers: [{ name: 'i', image: init }] } : {}),
        },
      },
    },
  });
  it('lists every container image of workloads, flags mutable tags', () => {
    const imgs = imagesOf([
      deploy('reg.example.com/a/w:1.4.2', 'reg.example.com/a/init:latest'),
      { kind: 'ConfigMap', metadata: { name: 'x' }, data: { image: 'nope' } },
      {
        kind: 'CronJob',
        metadata: { name: 'cj' },
        spec: {
          jobTemplate: { spec: { template: { spec: { containers: [{ name: 'j', image: `reg:5000/j@${D1}` }] } } } },
        },
      },
    ]);
    expect(imgs.map((i) => [i.object, i.container, i.name, i.tag, i.digest, i.mutable])).toEqual([
      ['Deployment/w', 'i', 'reg.example.com/a/init', 'latest', undefined, true],
      ['Deployment/w', 'c', 'reg.example.com/a/w', '1.4.2', undefined, true],
      ['CronJob/cj', 'j', 'reg:5000/j', undefined, D1, false],
    ]);
  });
  it('a digest pins; :latest with a digest is still flagged', () => {
    expect(isMutableImage(`r.io/a@${D1}`)).toBe(false);
    expect(isMutableImage(`r.io/a:1.0@${D1}`)).toBe(false);
    expect(isMutableImage(`r.io/a:latest@${D1}`)).toBe(true);
    expect(isMutableImage('r.io/a')).toBe(true);
  });
  it('flags pods running a digest Git did not name, checks tags by their resolved digest', () => {
    const git = [
      { name: 'r.io/pinned', digest: D1 },
      { name: 'r.io/tagged', resolved: D2 },
      { name: 'r.io/unresolved' },
    ];
    const pods = [
      { pod: 'p1', container: 'a', image: `r.io/pinned@${D1}`, imageID: `r.io/pinned@${D1}` },
      { pod: 'p2', container: 'a', image: 'r.io/pinned:1', imageID: `docker-pullable://r.io/pinned@${D2}` },
      { pod: 'p3', container: 'b', image: 'r.io/tagged:2', imageID: `r.io/tagged@${D2}` },
      { pod: 'p4', container: 'c', image: 'r.io/unresolved:3', imageID: `r.io/unresolved@${D1}` },
      { pod: 'p5', container: 'd', image: 'r.io/sidecar:1', imageID: `r.io/sidecar@${D1}` },
      { pod: 'p6', container: 'e', image: 'r.io/tagged:2', imageID: '' },
    ];
    const r = checkLiveDigests(git, pods);
    expect(r.pods).toBe(6);
    expect(r.unresolved).toBe(1);
    expect(r.unexpected.map((u) => u.pod)).toEqual(['p2', 'p5']);
    expect(r.digests[D1]).toBe(3);
  });
});

describe('promotion by digest', () => {
  it.each([
    [[], ['r/a@sha256:1'], undefined],
    [['r/a@sha256:1'], ['r/a@sha256:1', 'r/b@sha256:2'], true],
    [['r/a@sha256:1', 'r/b@sha256:2'], ['r/a@sha256:1'], false],
    [['r/a@sha256:1'], ['r/a@sha256:9'], false],
  ])('promoted(%j, %j) = %s', (from, to, want) => {
    expect(promoted(from, to)).toBe(want);
  });
  it('digests of a release: pinned or resolved, deduplicated, sorted; a tag never resolved is left out', () => {
    expect(
      releaseDigests([
        { name: 'r/b', digest: 'sha256:2' },
        { name: 'r/a', resolved: 'sha256:1' },
        { name: 'r/a', resolved: 'sha256:1' },
        { name: 'r/c' },
      ]),
    ).toEqual(['r/a@sha256:1', 'r/b@sha256:2']);
  });
});
