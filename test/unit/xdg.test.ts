import { userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stateHome } from '../../src/config/state-dir.js';
import { profilesPath } from '../../src/config/profile-file.js';

// State (ledger, conversations, jobs) and the profiles go where XDG says, never into the current folder.
const home = userInfo().homedir;

describe('state and config folders', () => {
  it('HOME unset or blank: the account\'s home, not ./.local/state', () => {
    for (const env of [{}, { HOME: '' }, { HOME: '  ' }, { HOME: 'relative/home' }]) {
      expect(stateHome(env)).toBe(join(home, '.local', 'state', 'router'));
      if (process.platform === 'linux') expect(profilesPath(undefined, env)).toBe(join(home, '.config', 'router', 'config.json'));
    }
  });

  it('a relative XDG_STATE_HOME or XDG_CONFIG_HOME is ignored, as the XDG rule says; an absolute one is used', () => {
    const env = { HOME: '/home/ada', XDG_STATE_HOME: '.state', XDG_CONFIG_HOME: 'cfg' };
    expect(stateHome(env)).toBe('/home/ada/.local/state/router');
    expect(stateHome({ ...env, XDG_STATE_HOME: '/var/state' })).toBe('/var/state/router');
    if (process.platform === 'linux') {
      expect(profilesPath(undefined, env)).toBe('/home/ada/.config/router/config.json');
      expect(profilesPath(undefined, { ...env, XDG_CONFIG_HOME: '/etc/xdg' })).toBe('/etc/xdg/router/config.json');
    }
  });

  it('ROUTER_STATE_DIR and ROUTER_CONFIG_DIR still move them, as given', () => {
    expect(stateHome({ ROUTER_STATE_DIR: '/tmp/s' })).toBe('/tmp/s');
    expect(profilesPath('/tmp/c')).toBe('/tmp/c/config.json');
  });
});
