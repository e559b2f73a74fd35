import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/inprocess.js';

// The config file is placed by the run's environment, never by the host process's: a program running main()
// (or RouterClient's settings) with its own env must not read or write the host user's profiles.
describe('the config folder comes from the run environment', () => {
  const home = mkdtempSync(join(tmpdir(), 'router-home-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const env = { HOME: home, XDG_CONFIG_HOME: undefined, ROUTER_CONFIG_DIR: undefined, ROUTER_API_KEY: undefined };

  it('config path names the file under the run HOME, blank ROUTER_CONFIG_DIR included', async () => {
    for (const dir of [undefined, '', '  ']) {
      const r = await runInProcess(['config', 'path'], { env: { ...env, ROUTER_CONFIG_DIR: dir } });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe(join(home, '.config', 'router', 'config.json'));
    }
  });

  it('config set writes there, and config get reads it back', async () => {
    const set = await runInProcess(['config', 'set', 'model', 'local/echo'], { env });
    expect(set.code).toBe(0);
    expect(statSync(join(home, '.config', 'router', 'config.json')).mode & 0o777).toBe(0o600);
    const get = await runInProcess(['config', 'get', 'model'], { env });
    expect(get.stdout.trim()).toBe('local/echo');
  });
});
