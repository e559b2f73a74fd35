import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { typedRepl } from '../support/typed-repl.js';

// chat -i's slash commands, typed one a line; none of these sends anything (the API root answers nothing).
const home = mkdtempSync(join(tmpdir(), 'router-repl-commands-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = { ROUTER_STATE_DIR: join(home, 'state'), ROUTER_CONFIG_DIR: join(home, 'config'), ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_API_ROOT: 'http://127.0.0.1:9/api', ROUTER_PROFILE: '', ROUTER_MODEL: 'x/y', NO_COLOR: '1' };

/** One `chat -i` session that types `lines` (then /exit, unless one ended it); its exit code and stderr. */
const session = (lines: string[], columns?: number) => typedRepl(env, lines, { columns });

describe('chat -i slash commands', () => {
  it('a command that takes no argument refuses one in one line and does nothing; the session goes on', async () => {
    const { code, stderr } = await session(['/system be brief', '/clear all', '/exit now', '/help me', '/tools x', '/edit notes.md']);
    expect(code).toBe(0);
    for (const cmd of ['/clear', '/exit', '/help', '/tools', '/edit']) expect(stderr).toContain(`\nusage: ${cmd} takes no argument\n> `);
    // Nothing was cleared: "/clear all" did not run.
    expect(stderr).not.toContain('conversation cleared');
  });

  it('/help fits an 80-column terminal: no line of it is wider', async () => {
    const { stderr } = await session(['/help']);
    const help = stderr.slice(stderr.indexOf('/model ID'), stderr.lastIndexOf('\n> '));
    expect(help.split('\n').length).toBeGreaterThan(10);
    for (const line of help.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('/help and the greeting fit a 40-column terminal too, broken between words', async () => {
    const { stderr } = await session(['/help'], 40);
    const shown = stderr.slice(0, stderr.lastIndexOf('\n> '));
    // Was: each line of 80 broken by the terminal at its 40th column, mid-word ("(chec" / "ked against").
    for (const line of shown.split('\n')) expect(line.length, line).toBeLessThanOrEqual(40);
    expect(shown).toContain('\n/model ID         switch the model\n                  (checked against\n');
    expect(stderr).toMatch(/^router chat with x\/y\. Alt-Enter or\nCtrl-J: a new line; \/help lists the\ncommands; /);
  });
});
