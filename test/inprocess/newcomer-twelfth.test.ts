import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, startCliEnv, type CliEnv } from '../support/cli-env.js';

// Issue 46, round 12: a newcomer's hour with the installed tarball.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

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
  expect(fish).toContain(`-n '__router_at conversations show' -a '(router __complete conversations 2>/dev/null)'`);
});

it('usage --reconcile asks each call of the ledger of the service it went to, and names the others\' roots', async () => {
  // The README's start: the emulator's root in the environment, then another service with the same profile.
  const other = await startCliEnv();
  try {
    const state = { ROUTER_STATE_DIR: join(t.dir, 'reconcile-state') };
    expect((await run(['chat', '--model', 'local/echo', 'at the first'], state)).code).toBe(0);
    const line = JSON.parse(readFileSync(join(t.dir, 'reconcile-state', 'usage.jsonl'), 'utf8').trim());
    expect(line.api_root).toBe(t.apiRoot);
    other.clearRequests();
    const there = await run(['usage', '--reconcile'], { ...state, ROUTER_API_ROOT: other.apiRoot, ROUTER_API_KEY: other.apiKey });
    // Was: the other service asked for the first's generation, "1 not known to the service yet; 1 left: run router
    // usage --reconcile again" for an hour, then marked unknown and never reconciled where it was made.
    expect(there.stderr).toBe(`reconciled 0 calls of profile "default"; none left; 1 call made at ${t.apiRoot}, not asked here (reconcile it there: router usage --reconcile --api-root ${t.apiRoot}, with its key)\n`);
    expect(other.requests().filter((r) => r.path.includes('/generation'))).toEqual([]);
    const here = await run(['usage', '--reconcile', '--json', '--jq', '[(.reconciled | length), .left, .elsewhere]'], state);
    expect(here.stderr).toMatch(/^reconciled 1 call of profile "default": .*; none left\n$/);
    expect(JSON.parse(here.stdout)).toEqual([1, 0, {}]);
  } finally {
    await other.close();
  }
});
