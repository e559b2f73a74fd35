/**
 * An error is one line on stderr however long, piped (a log, CI, `2>err.txt`, `grep error:`) and on a terminal of
 * any width: router never breaks it; a terminal narrower than the line wraps it on screen (its soft wrap, which a
 * copy or a resize joins again). Checked (c20): the 80-column wrap seen on a terminal is tmux's, the bytes written
 * hold one line (pipe-pane); commander's errors, io.error's and the network's alike. Every command of the tree.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { definitionOf } from '../../src/cli/define.js';
import type { Command } from '../../src/cli/commander.js';
import { runInProcess } from '../support/inprocess.js';

const home = mkdtempSync(join(tmpdir(), 'router-error-lines-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = { HOME: home, ROUTER_STATE_DIR: join(home, 'state'), ROUTER_CONFIG_DIR: join(home, 'config'), ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_API_ROOT: 'http://127.0.0.1:9/api', ROUTER_PROFILE: '', ROUTER_MODEL: '', NO_COLOR: '1' };

/** Every command that runs (not a group), as its words. */
function runnable(cmd: Command, path: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => {
    const here = [...path, c.name()];
    const def = definitionOf(c);
    return [...(def && 'run' in def ? [here] : []), ...runnable(c, here)];
  });
}

const LONG = `--an-option-no-command-has-${'and-its-name-goes-on-'.repeat(6)}end`;

it('every command refusing an unknown long option: one error line, piped and on terminals of 40 and 200 columns', async () => {
  const paths = runnable(await buildProgram());
  expect(paths.length).toBeGreaterThan(40);
  for (const path of paths) {
    for (const tty of [undefined, { stderr: true }]) {
      for (const columns of tty ? [40, 200] : [80]) {
        const r = await runInProcess([...path, LONG], { env, tty, columns });
        const where = `${path.join(' ')} (${tty ? `terminal, ${columns} columns` : 'piped'})`;
        expect(r.code, where).toBe(2);
        expect(r.stderr, where).toMatch(/^error: [^\n]{100,}\n$/);
      }
    }
  }
});

it('a long error of the run itself (a connection refused, a value refused), piped: one line', async () => {
  for (const args of [['chat', '--model', 'local/echo', '--max-retries', '0', 'hi'], ['chat', '--temperature', `lots-${'of-words-'.repeat(12)}`, 'hi'], ['config', 'set', `a-setting-${'with-a-long-name-'.repeat(6)}`, 'v']]) {
    const r = await runInProcess(args, { env });
    expect(r.code, args.join(' ')).not.toBe(0);
    expect(r.stderr, args.join(' ')).toMatch(/^error: [^\n]{81,}\n$/);
  }
});
