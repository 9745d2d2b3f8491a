// npm run cli -- diff <cluster>/<namespace>/<app>: the same diff in a pipeline, with exit codes. The CLI runs
// as the console's own identity (.sandbox/kubeconfig-console, deploy/rbac.yaml); scenario helpers as admin. The
// diff tests own their estate (a staging app of their own, which they suspend and edit); it is deleted afterwards.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../sandbox/sandbox.ts';
import { getJson, kubectlEdit, setSuspended, suspendSettled } from '../../sandbox/scenario.ts';
import { fluxReconciled } from '../support/flux.ts';
import { bffKubeconfig } from '../support/kubeconfig.ts';
import { digitalHumanTemplate, ownEstate, type Estate } from '../support/own-estate.ts';
import { serverBundle } from '../support/server-bundle.ts';
// the bundled CLI the image ships (test/support/server-bundle.ts)
const bundle = await serverBundle();

const cli = (target: string, env: Record<string, string> = {}) =>
  spawnSync(process.execPath, bundle.cliArgs('diff', target), {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, KUBECONFIG: bffKubeconfig(), ...env },
    timeout: 120_000,
  });

describe('diff CLI', () => {
  let estate: Estate;
  /** the CLI's target for the estate's app: <cluster>/flux-system/<Kustomization> */
  let target: string;
  beforeAll(async () => {
    estate = await ownEstate({ name: 'cli', env: 'staging', files: digitalHumanTemplate('staging') });
    target = `${estate.cluster}/flux-system/${estate.kustomization()}`;
  }, 300_000);
  afterAll(async () => {
    await estate?.teardown();
  });

  it('exits 1 and names the manager when live drifted, 0 once it matches Git again', async () => {
    const { cluster, namespace } = estate;
    await suspendSettled(cluster, estate.kustomization());
    kubectlEdit(cluster, 'deployment/tts-gateway', namespace, { spec: { replicas: 5 } });
    const r = cli(target);
    // the drift was still live when the CLI read it (nothing reverted it meanwhile)
    expect(getJson(cluster, ['-n', namespace, 'get', 'deployment', 'tts-gateway']).spec).toMatchObject({
      replicas: 5,
    });
    // the whole output on a failure: an exit 2 says why in stderr or in the UNKNOWN line
    expect({ status: r.status, stdout: r.stdout.slice(0, 2000), stderr: r.stderr }).toMatchObject({ status: 1 });
    expect(r.stdout).toContain(`~ Deployment ${namespace}/tts-gateway`);
    expect(r.stdout).toMatch(/spec\.replicas: git=2 live=5 {2}\[drift\] kubectl-edit \(Update/);
    kubectlEdit(cluster, 'deployment/tts-gateway', namespace, { spec: { replicas: 2 } });
    setSuspended(cluster, estate.kustomization(), false);
    // Flux applied Git again (its reconcile after the resume): live matches Git
    await fluxReconciled(cluster, estate.kustomization());
    const clean = cli(target);
    expect(clean.stdout).toContain('render: flux-render');
    expect({ status: clean.status, stdout: clean.stdout, stderr: clean.stderr }).toMatchObject({ status: 0 });
  });

  it('exits 2 with a clear message for an unknown app or a bad target', () => {
    const r = cli('nonprod/flux-system/no-such-app');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('no Kustomization, Application or HelmRelease flux-system/no-such-app');
    expect(cli('nonsense').status).toBe(2);
  });

  it("with the console's least-privilege identity, a clean app diffs by server-side dry-run and exits 0", () => {
    // deploy/rbac.yaml grants the dry-run's verbs (patch, create) on the kinds the app renders: no object falls
    // back to the normalized comparison, so no apiserver default shows up as a change and a pipeline gate passes
    const r = cli(target, { KUBECONFIG: bffKubeconfig() });
    expect(r.stdout + r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).not.toMatch(/normalized comparison|dry-run forbidden/);
    expect(r.stdout).not.toMatch(/pending|drifted|conflict/);
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toMatchObject({ status: 0 });
  });
});

describe('user CLI', () => {
  it('adds a local account with grants and a one-time password printed once; it signs in and must change it', async () => {
    const { mkdtempSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { Accounts } = await import('../../src/server/auth/accounts.ts');
    const dataDir = mkdtempSync(join(tmpdir(), 'cli-user-'));
    const run = (...args: string[]) =>
      spawnSync(process.execPath, bundle.cliArgs('user', ...args), {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        env: { ...process.env, CONSOLE_DATA_DIR: dataDir, KUBECONFIG: bffKubeconfig() },
        timeout: 60_000,
      });
    const r = run('add', 'erin', '--grant', 'reviewer@nonprod/dev', '--grant', 'viewer@prod');
    expect(r.status).toBe(0);
    const password = /shown once:\n\n {4}(\S+)\n/.exec(r.stdout)?.[1] ?? '';
    expect(password).toHaveLength(20);
    expect(r.stdout).toContain('user erin (reviewer@nonprod/dev, viewer@prod/*)');
    const file = readFileSync(join(dataDir, 'auth.json'), 'utf8');
    expect(file).not.toContain(password);
    const accounts = await Accounts.open(join(dataDir, 'auth.json'), () => undefined);
    expect((await accounts.check('erin', password))?.mustChangePassword).toBe(true);
    // the same name twice, and a role that does not exist: refused with the reason
    expect(run('add', 'erin').stderr).toContain('user erin exists');
    const bad = run('add', 'frank', '--grant', 'superuser');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('invalid grant "superuser"');
  });
});
