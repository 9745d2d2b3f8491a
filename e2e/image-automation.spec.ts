// Issue 26 part 5's e2e: an auditor opens dev's page and reads its image automation (where it pushes, the
// policy's choice, the registry's tags); a new tag lands in the registry, the real image-automation-controller
// commits it, and the auditor reads in the release chain that the commit was the automation's (its controller
// reported the push), with the policy, the tag chosen and the registry. The automation puts dev back itself once
// the tag is deleted.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import {
  IMAGE_AUTOMATION,
  pushImageTag,
  untagAndWaitForRestore,
  waitForAutomationPush,
} from '../sandbox/image-automation.ts';
import { signIn } from '../test/support/auth.ts';
import { storageStateFor } from '../test/support/bff-process.ts';

const APP = 'nonprod/flux-system/kustomization/digital-human-dev';
const NEW_TAG = '2.1.2';
const AUTOMATION = `${IMAGE_AUTOMATION.namespace}/${IMAGE_AUTOMATION.automation}`;
const base = process.env.E2E_BASE_URL ?? '';

let pushed = false;

test.afterAll(async () => {
  if (pushed) await untagAndWaitForRestore(NEW_TAG);
});

test('an auditor reads dev’s image automation, then finds its commit named as its own in the release chain', async ({
  browser,
}) => {
  test.setTimeout(360_000);
  const auditor = await signIn(base, 'auditor');
  const storage = join(process.env.E2E_DATA_DIR ?? '/tmp', 'storage-auditor-images.json');
  writeFileSync(storage, JSON.stringify(storageStateFor(auditor)));
  const ctx = await browser.newContext({ baseURL: base, storageState: storage });
  try {
    const page = await ctx.newPage();
    await page.goto(`/apps/${APP}`);
    const panel = page.getByTestId('image-automation');
    await expect(panel.getByRole('heading', { name: 'Image automation' })).toBeVisible();
    await expect(panel).toContainText(`ImageUpdateAutomation ${AUTOMATION}`);
    await expect(panel).toContainText('pushes to main (straight to the branch: no pull request, so no review)');
    const policy = panel.getByTestId('image-policy');
    await expect(policy).toContainText(`semver ${IMAGE_AUTOMATION.semverRange}`);
    await expect(policy.getByTestId('image-policy-chosen')).toContainText('2.1.0');
    await expect(policy.getByTestId('image-repository-tags')).toContainText('2.1.0-build.2');

    // a new tag in the registry: the controller commits it to Git
    pushImageTag(IMAGE_AUTOMATION.image, NEW_TAG, '2.1.0-build.2');
    pushed = true;
    const sha = await waitForAutomationPush(NEW_TAG);

    // the release chain: the change state's actor is the automation, its value the policy's choice
    const change = page.locator(`[data-testid="release"][data-sha="${sha}"] [data-state="change"]`);
    await expect(async () => {
      if (!(await change.isVisible())) await page.reload();
      await expect(change).toContainText(`by image automation ${AUTOMATION}`, { timeout: 5_000 });
    }).toPass({ timeout: 150_000, intervals: [2_000, 5_000] });
    await expect(change).toContainText(
      `policy ${IMAGE_AUTOMATION.policy} (semver ${IMAGE_AUTOMATION.semverRange}) chose ${NEW_TAG} (was 2.1.0)`,
    );
    // and the panel shows the push
    await page.reload();
    await expect(panel.getByTestId('image-automation-last-push')).toHaveText(sha.slice(0, 8));
  } finally {
    await ctx.close();
  }
});
