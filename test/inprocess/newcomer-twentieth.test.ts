import { expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnvPerFile } from '../support/cli-env.js';
import type { CliEnv } from '../support/cli-env.js';

// Newcomer pass 20: a developer scripting router from the tarball.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('a field a piped listing has none of is empty, never "-": batch run --dry-run, batch job, keys, fragments', async () => {
  // docs/scripting.md promised it of every tab-separated listing; these printed "-", which a script
  // cannot tell from a value ("-" is a fine key name or source).
  const file = join(t.dir, 'two.jsonl');
  writeFileSync(file, ['a', 'b'].map((id) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: id }] } })).join('\n'));
  const dry = await run(['batch', 'run', file, '--model', 'local/echo', '--dry-run']);
  expect(dry.code, dry.stderr).toBe(0);
  expect(dry.stdout.split('\n')[0]).toMatch(/^1\t1-2\t2\t\d+\t\t\t\t$/);

  const management = { ROUTER_MANAGEMENT_KEY: t.managementKey };
  expect((await run(['keys', 'create', 'plain'], management)).code).toBe(0);
  const keys = await run(['keys', 'list'], management);
  const plain = keys.stdout.split('\n').find((l) => l.split('\t')[1] === 'plain')!.split('\t');
  // hash, name, label, state, limit, left, reset, usage, expires, created: no limit, no reset, no expiry.
  expect([plain[4], plain[5], plain[6], plain[8]]).toEqual(['', '', '', '']);
  expect(plain).not.toContain('-');

  const notes = join(t.dir, 'notes.txt');
  writeFileSync(notes, 'some notes\n');
  expect((await run(['chat', '--model', 'local/echo', '-f', notes, 'hi'])).code).toBe(0);
  const fragments = await run(['fragments', 'list']);
  expect(fragments.stdout.split('\t')[1]).toBe('');
});
