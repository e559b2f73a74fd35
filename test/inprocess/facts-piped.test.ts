import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// A final fact (how many were kept, what was left out) is said on stderr piped too, once, one line;
// progress stays on the terminal. Each of these was said on a terminal only.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('embed-multi says how many items it sent and how many it kept already, piped', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'state-multi') };
  const items = join(t.dir, 'items.jsonl');
  writeFileSync(items, ['a', 'b', 'c'].map((id) => JSON.stringify({ id, content: `text ${id}` })).join('\n'));
  expect(await run(['embed-multi', 'facts', items, '--model', 'local/embed'], env)).toMatchObject({ code: 0, stdout: '', stderr: '3 items embedded into facts\n' });
  writeFileSync(items, ['a', 'b', 'c', 'd'].map((id) => JSON.stringify({ id, content: `text ${id}` })).join('\n'));
  expect(await run(['embed-multi', 'facts', items], env)).toMatchObject({ code: 0, stderr: '1 item embedded into facts; 3 items kept already with the same text, not sent\n' });
  expect(await run(['embed-multi', 'facts', items], env)).toMatchObject({ code: 0, stderr: 'nothing sent to embed into facts: 4 items kept already with the same text\n' });
  // --quiet asks for no status lines.
  expect(await run(['embed-multi', '-q', 'facts', items], env)).toMatchObject({ code: 0, stderr: '' });
});

it('embed -c says whether the text was sent or kept already, piped', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'state-one') };
  const args = ['embed', 'a text', '-c', 'one', '--id', 'x', '--model', 'local/embed'];
  expect(await run(args, env)).toMatchObject({ code: 0, stdout: '', stderr: 'kept x in collection one\n' });
  expect(await run(args, env)).toMatchObject({ code: 0, stderr: 'x is in collection one already, with the same text: nothing sent\n' });
});

it("a role's setting another command's flag is left out, said piped", async () => {
  const config = join(t.dir, 'config-roles');
  mkdirSync(join(config, 'roles'), { recursive: true });
  writeFileSync(join(config, 'roles', 'r.md'), '---\nprevious-response-id: resp_1\n---\nBe brief.\n');
  const r = await run(['chat', '--role', 'r', '--model', 'local/echo', 'hi'], { ROUTER_CONFIG_DIR: config });
  expect(r).toMatchObject({ code: 0, stdout: 'hi\n' });
  expect(r.stderr).toBe('note: role r: previous-response-id left out (not a flag of router chat)\n');
});
