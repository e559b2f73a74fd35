import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Session 64's edges of llm's features (task c11): roles, embed-multi, chat -i with fragments.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('roles save refuses a --default no placeholder takes (nothing saved); roles edit saves one and warns', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'config-role-defaults') };
  // Was: saved, with a warning.
  const refused = await run(['roles', 'save', 'greet', '--system', 'Hello', '--default', 'nope=1'], env);
  expect(refused).toMatchObject({ code: 2, stderr: 'error: role greet has no $nope: --default nope would go unused (nothing saved; the placeholders: none)\n' });
  expect((await run(['roles', 'list'], env)).stdout).not.toContain('greet');
  const edited = join(t.dir, 'edited-role.md');
  writeFileSync(edited, '---\ndefaults:\n  lang: French\n  nope: 1\n---\nTranslate to $lang.\n');
  // Was: saved without a word.
  const r = await run(['roles', 'edit', 'tr'], { ...env, VISUAL: '', EDITOR: `cp ${edited}` });
  expect(r.code).toBe(0);
  expect(r.stderr).toContain('warning: role tr has no $nope: its defaults nope are left unused\n');
  expect((await run(['roles', 'show', 'tr'], env)).stdout).toContain('Translate to $lang.');
  writeFileSync(join(t.dir, 'clean-role.md'), '---\ndefaults:\n  lang: French\n---\nTranslate to $lang.\n');
  expect((await run(['roles', 'edit', 'tr2'], { ...env, VISUAL: '', EDITOR: `cp ${join(t.dir, 'clean-role.md')}` })).stderr).not.toMatch(/warning/);
});
