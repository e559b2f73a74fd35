import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('a title an older router cut at 60 characters (no "…") is shown with its "…"', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'state-old-titles'), XDG_STATE_HOME: join(t.dir, 'xdg-old-titles') };
  const prompt = 'tell me everything about the migration of arctic terns across the whole planet please';
  expect((await run(['chat', '--model', 'local/echo', prompt], env)).code).toBe(0);
  const dir = join(env.ROUTER_STATE_DIR, 'conversations');
  const file = join(dir, readdirSync(dir).find((n) => n.endsWith('.json'))!);
  const c = JSON.parse(readFileSync(file, 'utf8'));
  // As routers before 00e1d666 kept it: the prompt's first 60 characters, bare.
  writeFileSync(file, JSON.stringify({ ...c, title: prompt.slice(0, 60) }));
  const [listed] = JSON.parse((await run(['conversations', 'list', '--json', 'title'], env)).stdout);
  // Was: the 60 characters with no sign of the cut.
  expect(listed.title).toBe('tell me everything about the migration of arctic terns acro…');
  expect(JSON.parse((await run(['conversations', 'show', c.id, '--json', 'title'], env)).stdout).title).toBe(listed.title);
});
