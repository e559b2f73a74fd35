import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnvWithBatch, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
let requests: string;

beforeAll(async () => {
  ({ t, requests } = await startCliEnvWithBatch());
});
afterAll(() => t.close());

describe('state and config folders that cannot be made', () => {
  it('a chat whose turn cannot be kept still succeeds: the answer, exit 0, a warning only when asked for', async () => {
    const env = { ROUTER_STATE_DIR: join(requests, 'router') }; // under a file: nothing can be made there
    const plain = await t.run(['chat', '--model', 'local/echo', 'hi'], { env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toBe('hi\n');
    // The ledger line that could not be written is said always (usage will miss the call); the turn, only when asked for.
    const ledger = `warning: the usage ledger ${join(requests, 'router', 'usage.jsonl')} could not be written (a part of the path is not a folder): router usage will not count this call\n`;
    expect(plain.stderr).toBe(ledger);
    const named = await t.run(['chat', '--conversation', 'kept', '--model', 'local/echo', 'hi'], { env });
    expect(named.code).toBe(0);
    expect(named.stdout).toBe('hi\n');
    expect(named.stderr.startsWith(ledger)).toBe(true);
    expect(named.stderr.slice(ledger.length)).toMatch(/^warning: this turn was not kept in conversation kept \(cannot use .+: a part of the path is not a folder\)\n$/);
  });

  it('with logging off, -c or --conversation says the turn was not kept; a plain chat says nothing', async () => {
    const env = { ROUTER_STATE_DIR: join(t.dir, 'nolog-state') };
    expect((await t.run(['chat', '--model', 'local/echo', 'first'], { env })).code).toBe(0);
    const off = "(logging is off: --no-log, ROUTER_NO_LOG or the profile's log setting)";
    const c = await t.run(['chat', '-c', 'again'], { env: { ...env, ROUTER_NO_LOG: '1' } });
    expect(c).toMatchObject({ code: 0, stdout: 'again\n' });
    expect(c.stderr).toMatch(new RegExp(`^warning: this turn was not kept in conversation c_\\w+ ${off.replace(/[()]/g, '\\$&')}\n$`));
    const named = await t.run(['chat', '--no-log', '--conversation', 'trip', '--model', 'local/echo', 'x'], { env });
    expect(named).toMatchObject({ code: 0, stdout: 'x\n', stderr: `warning: this turn was not kept in conversation trip ${off}\n` });
    expect((await t.run(['chat', '--no-log', '--model', 'local/echo', 'x'], { env })).stderr).toBe('');
    // Nothing was kept: the conversation still holds the first turn only.
    const shown = JSON.parse((await t.run(['conversations', 'show', '--json', (/c_\w+/.exec(c.stderr) ?? [''])[0]], { env })).stdout);
    expect(shown.messages.map((m: { content: string }) => m.content)).toEqual(['first', 'first']);
  });

  it('a config folder that is a file, a config file that is a folder: in words, exit 2', async () => {
    const asFile = await t.run(['config', 'list'], { env: { ROUTER_CONFIG_DIR: requests } });
    expect(asFile).toMatchObject({ code: 2, stderr: `error: config file ${requests}/config.json: cannot read it (a part of the path is not a folder)\n` });
    const chat = await t.run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_CONFIG_DIR: requests } });
    expect(chat).toMatchObject({ code: 2, stderr: `error: config file ${requests}/config.json: cannot read it (a part of the path is not a folder)\n` });
    const folder = join(t.dir, 'cfg-folder');
    mkdirSync(join(folder, 'config.json'), { recursive: true });
    const asFolder = await t.run(['config', 'list'], { env: { ROUTER_CONFIG_DIR: folder } });
    expect(asFolder).toMatchObject({ code: 2, stderr: `error: config file ${folder}/config.json: is a folder: move it away\n` });
  });

  // Node's own recursive mkdir spins forever under /proc; each of these used to hang.
  it.skipIf(!existsSync('/proc/self'))('folders under /proc: one line each, at once', async () => {
    const config = await t.run(['config', 'set', 'model', 'local/echo'], { env: { ROUTER_CONFIG_DIR: '/proc/router-nope' } });
    expect(config.code).toBe(2);
    expect(config.stderr).toBe('error: cannot create the config folder /proc/router-nope: no such file or folder\n');
    const serve = await t.run(['serve', '--port', '0', '--state', '/proc/router-nope/state']);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toBe('error: --state /proc/router-nope/state: cannot make /proc/router-nope: no such file or folder\n');
    const chat = await t.run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_STATE_DIR: '/proc/router-nope' } });
    expect(chat.code).toBe(0);
    expect(chat.stdout).toBe('hi\n');
    const run = await t.run(['batch', 'run', requests], { env: { ROUTER_STATE_DIR: '/proc/router-nope' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: cannot use \/proc\/router-nope: no such file or folder\n$/);
  });
});
