import { expect, it } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEnvPerFile } from '../support/cli-env.js';

// Issue 46, round 11: a newcomer's hour with the installed tarball.
const run = cliEnvPerFile(() => {});

it('--max-cost help of embed, speak and decide says over the cap is refused: they have no max tokens to lower', async () => {
  for (const cmd of ['embed', 'speak', 'decide']) {
    const help = (await run([cmd, '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help, cmd).toContain('--max-cost <usd> the most this call may cost, from the model list\'s prices: a call that could cost more is refused (exit 4)');
    expect(help, cmd).not.toContain('max tokens');
  }
  const chat = (await run(['chat', '--help'])).stdout.replace(/\s+/g, ' ');
  expect(chat).toContain('the max tokens are lowered to fit, or the call is refused (exit 4)');
});

it('an MCP server that crashes at start is named by its error, not by node\'s version line after the stack', async () => {
  // node ends a crash with "Node.js v20…": that last line was all the error said of why.
  const missing = join(tmpdir(), 'router-no-such-dir', 'server.js');
  const r = await run(['chat', '--model', 'local/tools', '--mcp', `'${process.execPath}' '${missing}'`, 'hi']);
  expect(r.code).toBe(12);
  expect(r.stderr).toMatch(/^error: MCP server .*: ended before it answered; it said: Error: Cannot find module '.*server\.js'\n$/);
}, 60_000);
