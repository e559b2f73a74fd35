import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { until } from '../support/until.js';

// Without --tool-timeout, --timeout bounds each tool call: a call stopped by it names --timeout, the
// flag that set the bound, not the --tool-timeout that was never given (an MCP server's error, the
// tool loop's warning).
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('an MCP server that does not answer within --timeout (no --tool-timeout): the error names --timeout', async () => {
  const pidFile = join(t.dir, 'hang.pid');
  const mcp = [process.execPath, join(ROOT, 'test/support/mcp-fixture-server.mjs'), 'hang', pidFile].map((a) => `'${a}'`).join(' ');
  const r = await run(['chat', '--model', 'local/tools', '--timeout', '1', '--mcp', mcp, 'hang']);
  expect(r).toMatchObject({ code: 12, stderr: 'error: MCP server fixture-hang did not answer a call of hang in time (--timeout 1s)\n' });
  // The fixture never ends by itself: waited for within the test's bound (5 s a loaded machine can pass).
  expect(await until(() => !running(Number(readFileSync(pidFile, 'utf8'))))).toBe(true);
});

it('a tool command stopped at --timeout (no --tool-timeout): the warning names --timeout; with both, --tool-timeout', async () => {
  const file = join(t.dir, 'tools.json');
  writeFileSync(file, JSON.stringify([{ type: 'function', function: { name: 'slow', parameters: { type: 'object', properties: {} } }, command: 'sleep 30' }]));
  const r = await run(['chat', '--model', 'local/tools', '--tools', file, '--timeout', '1', 'slow']);
  expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: slow answered: the tool did not end within 1 s and was stopped\n' });
  expect(r.stderr).toBe('warning: tool slow ran past --timeout 1s and was stopped\n');
  const both = await run(['responses', '--model', 'local/tools', '--tools', file, '--timeout', '30', '--tool-timeout', '1', 'slow']);
  expect(both.code, both.stderr).toBe(0);
  expect(both.stderr).toBe('warning: tool slow ran past --tool-timeout 1s and was stopped\n');
});
