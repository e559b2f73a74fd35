import { expect, it } from 'vitest';
import { cliEnvPerFile } from '../support/cli-env.js';

// Issue 46, round 12: a newcomer's hour with the installed tarball.
const run = cliEnvPerFile(() => undefined);

it('conversation ids complete on TAB for chat --conversation, conversations show and delete (files were offered)', async () => {
  expect((await run(['chat', '--conversation', 'groceries', '--model', 'local/echo', 'milk'])).code).toBe(0);
  expect((await run(['chat', '--conversation', 'trip-plan', '--model', 'local/echo', 'oslo'])).code).toBe(0);
  const ids = (await run(['__complete', 'conversations'])).stdout.split('\n');
  expect(ids).toEqual(expect.arrayContaining(['groceries', 'trip-plan']));
  const bash = (await run(['completion', 'bash'])).stdout;
  expect(bash).toContain(`'chat|--conversation') COMPREPLY=( $(compgen -W "$(router __complete conversations 2>/dev/null)" -- "$cur") ); return ;;`);
  expect(bash).toMatch(/'conversations show'\) subs=.*arg='dynamic:conversations'/);
  expect(bash).toMatch(/'conversations delete'\) subs=.*arg='dynamic:conversations'/);
  const zsh = (await run(['completion', 'zsh'])).stdout;
  expect(zsh).toContain(`('chat|--conversation') compadd -- \${(f)"$(router __complete conversations 2>/dev/null)"}; return ;;`);
  const fish = (await run(['completion', 'fish'])).stdout;
  expect(fish).toContain(`-l conversation -x -a '(router __complete conversations 2>/dev/null)'`);
  expect(fish).toMatch(/__fish_seen_subcommand_from conversations; and __fish_seen_subcommand_from show' -a '\(router __complete conversations 2>\/dev\/null\)'/);
});
