// Issue #6 in Chromium against the real sandbox: sign-in, roles in the UI, and hostile content.
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { kubectl } from '../sandbox/sandbox.ts';
import { getJson } from '../sandbox/scenario.ts';
import { TEST_PASSWORD } from '../test/support/auth.ts';
import { spawnBff } from '../test/support/bff-process.ts';
import { startOidcProvider } from '../test/support/oidc-provider.ts';

// these tests sign in by themselves: no stored session
test.use({ baseURL: process.env.E2E_BASE_URL, storageState: { cookies: [], origins: [] } });

const DEV_APP = '/apps/nonprod/flux-system/kustomization/digital-human-dev';

async function signInAs(page: Page, user: string) {
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test('a signed-out visit goes to sign-in and comes back to the same page; a viewer sees why it may not act', async ({
  page,
}) => {
  await page.goto(`${DEV_APP}?tk=Service`);
  await expect(page).toHaveURL(/\/signin\?next=/);
  // a wrong password is said so, and nothing else happens
  await page.getByLabel('User name').fill('viewer');
  await page.getByLabel('Password').fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(page.getByRole('alert')).toHaveText('wrong user name or password');
  await signInAs(page, 'viewer');
  await expect(page).toHaveURL(new RegExp(`${DEV_APP}\\?tk=Service$`));
  await expect(page.getByTestId('current-user')).toHaveText('viewer');
  await expect(page.getByTestId('current-roles')).toHaveText('viewer');
  await expect(page.getByTestId('reconcile')).toBeDisabled();
  await expect(page.getByTestId('reconcile-disabled-reason')).toHaveText(
    'You need the developer or oncall role on nonprod/dev to reconcile this app',
  );
  await expect(page.getByTestId('evidence-hidden')).toContainText(
    "You need the reviewer, oncall or auditor role on nonprod/dev to see this app's evidence",
  );
  await page.screenshot({ path: 'test-results/roles-viewer.png' });
  // the session cookie is not readable by scripts
  expect(await page.evaluate(() => document.cookie)).not.toContain('console_session');
  const cookie = (await page.context().cookies()).find((c) => c.name === 'console_session');
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });

  // sign-out ends the session: the next page needs sign-in again
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/signin/);
  await page.goto(DEV_APP);
  await expect(page).toHaveURL(/\/signin\?next=/);
});

test('a developer reconciles dev from the app page; the request reaches Flux and the evidence names the user', async ({
  page,
}) => {
  await page.goto(DEV_APP);
  await signInAs(page, 'developer');
  await expect(page).toHaveURL(new RegExp(`${DEV_APP}$`));
  const before = String(
    (
      getJson('nonprod', ['-n', 'flux-system', 'get', 'kustomization', 'digital-human-dev']).metadata as {
        annotations?: Record<string, string>;
      }
    ).annotations?.['reconcile.fluxcd.io/requestedAt'] ?? '',
  );
  await page.getByTestId('reconcile').click();
  await expect(page.getByText(/requested at \d\d:\d\d:\d\d/)).toBeVisible();
  const after = String(
    (
      getJson('nonprod', ['-n', 'flux-system', 'get', 'kustomization', 'digital-human-dev']).metadata as {
        annotations?: Record<string, string>;
      }
    ).annotations?.['reconcile.fluxcd.io/requestedAt'] ?? '',
  );
  expect(after).not.toBe(before);
  expect(Date.parse(after)).toBeGreaterThan(Date.now() - 60_000);
  // the evidence row names the developer (read with the admin session the other specs use)
  const admin = JSON.parse(readFileSync(String(process.env.E2E_STORAGE), 'utf8')) as {
    cookies: Array<{ name: string; value: string }>;
  };
  const c = admin.cookies[0];
  const res = await fetch(`${process.env.E2E_BASE_URL}/api/evidence?type=app.reconcile-requested&limit=5`, {
    headers: { Cookie: `${c?.name}=${c?.value}` },
  });
  const { events } = (await res.json()) as {
    events: Array<{ actor: string; app: string; data: { objects: string[] } }>;
  };
  expect(events[0]).toMatchObject({
    actor: 'developer',
    app: 'nonprod/flux-system/kustomization/digital-human-dev',
    data: { objects: ['Kustomization/flux-system/digital-human-dev', 'GitRepository/flux-system/digital-human'] },
  });
});

const PROBE = 'xss-probe';
const PAYLOAD = `<img src=x onerror="window.__pwned='img'"><script>window.__pwned='script'</script>`;

test('hostile annotations and URLs: no script runs and no javascript: link is rendered', async ({ page }) => {
  kubectl(
    'nonprod',
    ['apply', '--server-side', '--field-manager=attacker', '-f', '-'],
    JSON.stringify({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: {
        name: PROBE,
        namespace: 'argocd',
        labels: { env: 'staging' },
        annotations: {
          'link.argocd.argoproj.io/runbook': "javascript:window.__pwned='link'",
          'link.argocd.argoproj.io/dashboard': 'https://grafana.example.com/d/abc',
          description: PAYLOAD,
        },
      },
      spec: {
        project: 'default',
        source: { repoURL: "javascript:window.__pwned='repo'//", path: PAYLOAD, targetRevision: 'main' },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'staging' },
      },
    }),
  );
  // its own field manager: kustomize-controller takes over (and so removes at its next apply) fields written
  // as kubectl-annotate, which made this spec race dev's reconcile
  kubectl('nonprod', [
    '-n',
    'dev',
    'annotate',
    '--overwrite',
    '--field-manager=attacker',
    'service/tts-gateway',
    `note=${PAYLOAD}`,
  ]);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  try {
    await page.goto(`/apps/nonprod/argocd/application/${PROBE}`);
    await signInAs(page, 'admin');
    await expect(page.getByTestId('app-header')).toBeVisible();
    const links = page.getByTestId('app-links');
    await expect(links.getByRole('link', { name: 'dashboard' })).toHaveAttribute(
      'href',
      'https://grafana.example.com/d/abc',
    );
    await expect(links).toContainText("runbook (not a web link: javascript:window.__pwned='link')");
    await expect(page.getByTestId('app-header')).toContainText(PAYLOAD); // shown as text
    await expect(page.locator('a[href^="javascript:" i]')).toHaveCount(0);
    await expect(page.locator('img[src="x"], script:not([src])')).toHaveCount(0);

    // the same payload in a live object's annotation, in the details drawer
    await page.goto(`${DEV_APP}?tk=Service`);
    await page.getByRole('button', { name: 'tts-gateway' }).click();
    await expect(page.getByTestId('live-yaml')).toContainText('window.__pwned');
    await expect(page.locator('img[src="x"], script:not([src])')).toHaveCount(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
  } finally {
    kubectl('nonprod', ['-n', 'argocd', 'delete', 'application', PROBE, '--ignore-not-found', '--wait=false']);
    kubectl('nonprod', ['-n', 'dev', 'annotate', '--field-manager=attacker', 'service/tts-gateway', 'note-']);
  }
});

test('single sign-on: OIDC code flow with PKCE through the real browser; groups become roles; a forged token is refused', async ({
  page,
}) => {
  const idp = await startOidcProvider();
  const bff = await spawnBff('console-e2e-oidc', {
    env: {
      CONSOLE_OIDC_ISSUER: idp.issuer,
      CONSOLE_OIDC_CLIENT_ID: idp.clientId,
      CONSOLE_OIDC_CLIENT_SECRET: idp.clientSecret,
      CONSOLE_RELEASE_RECORDER: 'off', // sign-in only: the suite's main BFF records the releases
    },
    accounts: { groups: { 'team-render': ['developer@nonprod/dev'] } },
  });
  try {
    idp.setUser({ sub: 'u-123', name: 'Grace', email: 'grace@example.com', groups: ['team-render', 'other'] });
    await page.goto(`${bff.base}${DEV_APP}?tk=Deployment`);
    await expect(page).toHaveURL(/\/signin\?next=/);
    await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
    await expect(page).toHaveURL(`${bff.base}${DEV_APP}?tk=Deployment`);
    await expect(page.getByTestId('current-user')).toHaveText('oidc:u-123');
    await expect(page.getByTestId('current-roles')).toHaveText('developer@nonprod/dev');
    await expect(page.getByTestId('reconcile')).toBeEnabled();
    expect(idp.tokensIssued).toBe(1);

    // an ID token signed by someone else's key: no session, the reason on the page
    await page.getByRole('button', { name: 'Sign out' }).click();
    idp.setMode('forged-signature');
    await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
    await expect(page.locator('body')).toContainText('Sign-in failed');
    await expect(page.locator('body')).toContainText('signature');
    expect((await page.context().cookies()).find((c) => c.name === 'console_session')).toBeUndefined();
  } finally {
    await bff.stop();
    await idp.close();
  }
});
