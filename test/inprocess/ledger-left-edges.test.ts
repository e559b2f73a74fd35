import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// The CLI's and the ledger's edges closing note 8 left: each with what the service charged kept.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));
const ledgerOf = (dir: string) => {
  const path = join(dir, 'usage.jsonl');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : [];
};
it.each([
  ['chat', '/v1/chat/completions', /^gen-/],
  ['responses', '/v1/responses', /^resp_/],
])('%s streamed and broken mid-way: the call begun is in the ledger with its id, without a cost', async (command, endpoint, idShape) => {
  const state = join(t.dir, `broken-${command}`);
  await t.admin('faults', { faults: [`cut,after=8,times=1,path=${endpoint}`] });
  const r = await run([command, '--model', 'local/lorem', 'write 100 words'], { ROUTER_STATE_DIR: state });
  // Some text came, then the connection broke (exit 8): the service knows the call began.
  expect(r).toMatchObject({ code: 8, stdout: expect.stringMatching(/^[A-Z][a-z]+ [a-z]+/) });
  const kept = ledgerOf(state);
  expect(kept).toHaveLength(1);
  expect(kept[0]).toMatchObject({ command, endpoint, model: 'local/lorem', id: expect.stringMatching(idShape) });
  expect(kept[0]).not.toHaveProperty('cost');
});
