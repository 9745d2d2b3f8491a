// An install (the chart and the kustomize base set CONSOLE_INSTALL=1) refuses to start without the environment
// mapping, unless the operator chose labels (issue 40); a developer's run and sandbox mode are not installs.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

const base = { KUBECONFIG: '/dev/null' };

describe('CONSOLE_INSTALL', () => {
  it('without CONSOLE_ENVIRONMENTS an install is refused, naming both ways out', () => {
    expect(() => loadConfig({ ...base, CONSOLE_INSTALL: '1' }, [])).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, CONSOLE_INSTALL: '1' }, [])).toThrow(
      /CONSOLE_ENVIRONMENTS is not set.*CONSOLE_ENVIRONMENTS_FROM_LABELS=1/,
    );
  });

  it('an install with environments, or labels chosen, starts; so does a run that is not an install', () => {
    expect(() =>
      loadConfig({ ...base, CONSOLE_INSTALL: '1', CONSOLE_ENVIRONMENTS: 'nonprod/dev=dev' }, []),
    ).not.toThrow();
    expect(() =>
      loadConfig({ ...base, CONSOLE_INSTALL: '1', CONSOLE_ENVIRONMENTS_FROM_LABELS: '1' }, []),
    ).not.toThrow();
    expect(() => loadConfig(base, [])).not.toThrow();
    expect(() => loadConfig({ CONSOLE_INSTALL: '1', CONSOLE_SANDBOX: '1' }, [])).not.toThrow();
  });
});
