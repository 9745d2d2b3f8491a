// @vitest-environment jsdom
// The app page's image automation: where it pushes and what that means for review, each policy's choice and the
// registry's tags; unknown said as unknown; nothing when no automation writes to the app.
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ImageAutomationDto } from '../../../../api/schemas.ts';
import { ImageAutomation } from './image-automation.tsx';

afterEach(cleanup);

const ready = { status: 'True' as const, reason: 'Succeeded' };
const data = (over: Partial<ImageAutomationDto['automations'][number]> = {}): ImageAutomationDto => ({
  status: 'ok',
  automations: [
    {
      namespace: 'flux-system',
      name: 'digital-human-dev',
      ready,
      suspended: false,
      source: { kind: 'GitRepository', namespace: 'flux-system', name: 'digital-human' },
      checkoutBranch: 'main',
      pushBranch: 'main',
      updatePath: 'overlays/dev',
      author: { name: 'Flux image automation', email: 'bot@example.invalid' },
      lastPushCommit: 'a'.repeat(40),
      lastPushTime: new Date().toISOString(),
      observed: [],
      policies: ['tts-gateway'],
      ...over,
    },
  ],
  policies: [
    {
      namespace: 'flux-system',
      name: 'tts-gateway',
      ready,
      rule: 'semver ^2.1',
      repository: { namespace: 'flux-system', name: 'tts-gateway', image: 'reg/tts-gateway' },
      chosen: { image: 'reg/tts-gateway', tag: '2.1.1', digest: 'sha256:abc' },
      previous: { tag: '2.1.0' },
    },
  ],
  repositories: [
    {
      namespace: 'flux-system',
      name: 'tts-gateway',
      image: 'reg/tts-gateway',
      ready,
      tagCount: 4,
      latestTags: ['2.1.1', '2.1.0'],
    },
  ],
});

describe('ImageAutomation', () => {
  it('a direct push says there is no review; the policy shows its choice, the one before and the registry tags', () => {
    render(<ImageAutomation data={data()} />);
    const s = screen.getByTestId('image-automation');
    expect(s.textContent).toContain('pushes to main (straight to the branch: no pull request, so no review)');
    expect(s.textContent).toContain('Flux image automation <bot@example.invalid>');
    expect(screen.getByTestId('image-automation-last-push').textContent).toBe('aaaaaaaa');
    const row = screen.getByTestId('image-policy');
    expect(within(row).getByTestId('image-policy-chosen').textContent).toBe('2.1.1 (was 2.1.0)sha256:abc');
    expect(within(row).getByTestId('image-repository-tags').textContent).toBe('4 tags: 2.1.1, 2.1.0');
  });
  it('a push to another branch says its changes arrive through a pull request', () => {
    render(<ImageAutomation data={data({ pushBranch: 'image-updates' })} />);
    expect(screen.getByTestId('image-automation').textContent).toContain(
      'pushes to image-updates (a branch: its changes reach the app through a pull request)',
    );
  });
  it('unknown is said with its reason, not shown as none', () => {
    render(
      <ImageAutomation
        data={{
          status: 'unknown',
          why: 'imagepolicies on prod are not read yet',
          automations: [],
          policies: [],
          repositories: [],
        }}
      />,
    );
    expect(screen.getByRole('status').textContent).toBe('Unknown: imagepolicies on prod are not read yet');
  });
  it('no automation writing to the app: nothing', () => {
    const { container } = render(
      <ImageAutomation data={{ status: 'ok', automations: [], policies: [], repositories: [] }} />,
    );
    expect(container.textContent).toBe('');
  });
});
