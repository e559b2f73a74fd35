import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { typedRepl } from '../support/typed-repl.js';

// chat -i takes a model alias as --model does: /model NAME and a role's model (nothing is sent here).
const home = mkdtempSync(join(tmpdir(), 'router-repl-aliases-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = { ROUTER_STATE_DIR: join(home, 'state'), ROUTER_CONFIG_DIR: join(home, 'config'), ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_API_ROOT: 'http://127.0.0.1:9/api', ROUTER_PROFILE: '', ROUTER_MODEL: 'x/y', NO_COLOR: '1' };
mkdirSync(join(home, 'config', 'roles'), { recursive: true });
writeFileSync(join(home, 'config', 'aliases.json'), '{"fast": "local/echo", "wordy": "local/lorem"}\n');
writeFileSync(join(home, 'config', 'roles', 'quick.md'), '---\nmodel: wordy\n---\nBe terse.\n');

async function session(lines: string[]): Promise<string> {
  const { code, stderr } = await typedRepl(env, lines);
  expect(code).toBe(0);
  return stderr;
}

it('/model NAME and /role NAME take an alias as its model id', async () => {
  const stderr = await session(['/model fast', '/role quick', '/model fsat']);
  expect(stderr).toContain('model: local/echo\n');
  expect(stderr).toContain('role quick (model local/lorem)\n');
  expect(stderr).toContain('error: /model: fsat must look like <author>/<slug>');
});
