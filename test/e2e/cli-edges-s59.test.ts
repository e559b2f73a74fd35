import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { BIN, startTestEnv } from '../helpers.js';
import { startedForAll } from '../support/for-all.js';

// The CLI's edges closing note 12 left (task c5) that need a process of their own.
const t = startedForAll(() => startTestEnv());

const posts = () => t.requests().filter((r) => r.method === 'POST').length;

it.skipIf(process.platform !== 'linux')('speak -o /dev/tty with no terminal (setsid, nohup) is a bad output path: exit 2, nothing sent', () => {
  const before = posts();
  // setsid: a session of its own, so no controlling terminal, whatever runs the tests.
  const args = ['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', '/dev/tty'];
  const r = spawnSync('setsid', ['-w', process.execPath, BIN, ...args], { env: { ...process.env, ...t.env, ROUTER_MANAGEMENT_KEY: t.managementKey }, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  // Was exit 1, a failure of the machine; docs/reliability.md: an output path that cannot be written is exit 2.
  expect({ code: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 2, stdout: '', stderr: 'error: cannot write /dev/tty: no such device, or no terminal\n' });
  expect(posts()).toBe(before);
});
