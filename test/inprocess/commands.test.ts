import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';

// The fast ring: commands run in this process against an emulator in this process, over real HTTP.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-inproc-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  const { apiKey, managementKey } = emu.store.firstKeys();
  env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_MANAGEMENT_KEY: managementKey, ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_VOICE: '', ROUTER_SPEECH_MODEL: '', ROUTER_EMBED_MODEL: '' };
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ...o.env } });

describe('in process', () => {
  it('chat streams the answer to stdout', async () => {
    const r = await run(['chat', '--model', 'local/echo', 'hello', 'there']);
    expect(r).toEqual({ code: 0, stdout: 'hello there\n', stderr: '' });
  });

  it('a usage error is one line and exit 2, with nothing sent', async () => {
    const before = emu.requestLog.length;
    const r = await run(['chat', '--temperature', '3', 'hi']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(emu.requestLog.length).toBe(before);
  });

  it('the exit code comes back from main, not from process.exitCode', async () => {
    // The worker is shared with other files: what counts is that main() leaves it as it was.
    const before = process.exitCode;
    const r = await run(['batch', 'get', 'batch_nope']);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/^error: no batch batch_nope in this workspace \(asked GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/batches\/batch_nope( and http:\/\/127\.0\.0\.1:\d+\/api\/beta\/batches\/batch_nope)?\)\n$/);
    expect(process.exitCode).toBe(before);
  });

  it('batch list on a terminal fits its width: columns dropped from the right, relative times', async () => {
    const file = join(dir, 'r.jsonl');
    writeFileSync(file, JSON.stringify({ custom_id: 'a', body: { model: 'local/echo', messages: [{ role: 'user', content: 'x' }] } }));
    expect((await run(['batch', 'create', file])).code).toBe(0);
    for (const columns of [50, 80, 200]) {
      const r = await run(['batch', 'list'], { tty: { stdout: true, stderr: true }, columns, env: { NO_COLOR: '1' } });
      expect(r.code).toBe(0);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^id\s+status/);
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(columns);
      if (columns >= 80) expect(r.stdout).toMatch(/\d+s ago|\dm ago/);
      if (columns === 200) expect(lines[0]).toMatch(/endpoint/);
      if (columns === 50) expect(lines[0]).not.toMatch(/endpoint/);
    }
  });

  it('--no-input and ROUTER_NO_INPUT turn prompts into errors that name the way out', async () => {
    const a = await run(['login'], { tty: { stdin: true, stdout: true, stderr: true }, env: { ROUTER_NO_INPUT: '1' } });
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/pipe the api key on stdin/);
    const b = await run(['--no-input', 'config', 'init'], { tty: { stdin: true, stdout: true, stderr: true } });
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/router config set|router login --with-key/);
    const c = await run(['--no-input', 'chat', '-i'], { tty: { stdin: true, stdout: true, stderr: true } });
    expect(c.code).toBe(2);
  });

  it('speak refuses a terminal on stdout before sending', async () => {
    const r = await run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts'], { tty: { stdout: true } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/refusing to write audio to a terminal/);
  });
});
