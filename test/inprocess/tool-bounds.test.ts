import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';
import { until } from '../support/until.js';
import { running } from '../support/run-process.js';

// Tool commands (issue 44): started without router's keys, bounded in time, a missing command said.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;
let keys: { apiKey: string; managementKey: string };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-tool-bounds-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  keys = emu.store.firstKeys();
  env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: keys.apiKey, ROUTER_MANAGEMENT_KEY: keys.managementKey, ROUTER_CONFIG_DIR: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'xdg'), ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_VOICE: '', ROUTER_SPEECH_MODEL: '', ROUTER_EMBED_MODEL: '' };
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ...o.env } });
const NO_ARGS = { type: 'object', properties: {} };
/** A tools file of one tool, in chat's nested form or Responses' flat form. */
function tools(name: string, command: string, flat = false): string {
  const path = join(dir, `${name}-${flat ? 'flat' : 'nested'}.json`);
  writeFileSync(path, JSON.stringify([flat ? { type: 'function', name, parameters: NO_ARGS, command } : { type: 'function', function: { name, parameters: NO_ARGS }, command }]));
  return path;
}

describe('tool commands', () => {
  for (const [command, flat] of [['chat', false], ['chat', true], ['responses', false], ['responses', true]] as const) {
    it(`${command} (${flat ? 'flat' : 'nested'} tools file): the command's environment holds none of router's keys`, async () => {
      const file = tools('env', 'env', flat);
      const r = await run([command, '--model', 'local/tools', '--tools', file, 'env'], { env: { OTHER_NAME: keys.apiKey, KEPT: 'yes' } });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^From the tool results: env answered: /);
      expect(r.stdout).toContain('KEPT=yes');
      for (const secret of [keys.apiKey, keys.managementKey, 'ROUTER_API_KEY', 'ROUTER_MANAGEMENT_KEY', 'OTHER_NAME']) expect(r.stdout).not.toContain(secret);
    });
  }

  it('--tool-timeout ends a tool that ignores SIGTERM, and what it started; the model is told, stderr says it', async () => {
    const pids = join(dir, 'stubborn');
    const file = tools('stubborn', `trap '' TERM; sleep 60 & echo $! > ${pids}.child; echo $$ > ${pids}; wait`);
    const r = await run(['chat', '--model', 'local/tools', '--tools', file, '--tool-timeout', '1', 'stubborn']);
    expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: stubborn answered: the tool did not end within 1 s and was stopped\n' });
    expect(r.stderr).toBe('warning: tool stubborn ran past --tool-timeout 1s and was stopped\n');
    const started = [readFileSync(pids, 'utf8'), readFileSync(`${pids}.child`, 'utf8')].map((p) => Number(p.trim()));
    // What was left behind runs on for its minute; what was stopped is gone. Waited for 30 s at most: below that minute
    // (so one left behind is still seen) by what the call may have taken since it started it; 10 s a loaded machine passed.
    await until(() => !started.some(running), 30_000);
    expect(started.filter(running)).toEqual([]);
  });

  it('a command that is not there (exit 127) is said on stderr, not only to the model', async () => {
    const file = tools('missing', 'no-such-command-here-xyz');
    const r = await run(['chat', '--model', 'local/tools', '--tools', file, 'missing']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/missing answered: the command exited with code 127/);
    expect(r.stderr).toBe('warning: tool missing: its command was not found (exit 127)\n');
  });

  it('--tool-timeout goes with --tools or --mcp', async () => {
    const r = await run(['chat', '--model', 'local/tools', '--tool-timeout', '5', 'hi']);
    expect(r).toMatchObject({ code: 2, stderr: 'error: --tool-timeout goes with --tools or --mcp\n' });
  });
});
