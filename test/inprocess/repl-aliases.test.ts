import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { testStreams } from '../support/inprocess.js';
import { until } from '../support/until.js';

// chat -i takes a model alias as --model does: /model NAME and a role's model (nothing is sent here).
const home = mkdtempSync(join(tmpdir(), 'router-repl-aliases-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = { ROUTER_STATE_DIR: join(home, 'state'), ROUTER_CONFIG_DIR: join(home, 'config'), ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_API_ROOT: 'http://127.0.0.1:9/api', ROUTER_PROFILE: '', ROUTER_MODEL: 'x/y', NO_COLOR: '1' };
mkdirSync(join(home, 'config', 'roles'), { recursive: true });
writeFileSync(join(home, 'config', 'aliases.json'), '{"fast": "local/echo", "wordy": "local/lorem"}\n');
writeFileSync(join(home, 'config', 'roles', 'quick.md'), '---\nmodel: wordy\n---\nBe terse.\n');

async function session(lines: string[]): Promise<string> {
  const t = testStreams({ env, tty: { stdin: true, stdout: true, stderr: true } });
  const keys = new PassThrough();
  t.streams.stdin = keys;
  const run = main(['node', 'router', 'chat', '-i'], t.streams);
  const read = () => t.stderr().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  const prompts = () => (read().match(/^> /gm) ?? []).length;
  for (const [i, line] of [...lines, '/exit'].entries()) {
    await until(() => prompts() > i);
    keys.write(`${line}\r`);
  }
  expect(await run).toBe(0);
  return read();
}

it('/model NAME and /role NAME take an alias as its model id', async () => {
  const stderr = await session(['/model fast', '/role quick', '/model fsat']);
  expect(stderr).toContain('model: local/echo\n');
  expect(stderr).toContain('role quick (model local/lorem)\n');
  expect(stderr).toContain('error: /model: fsat must look like <author>/<slug>');
});
