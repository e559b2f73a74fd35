import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Emulator } from '../../src/emulator/server.js';
import { runInProcess } from '../support/inprocess.js';
import { emulatorPerFile } from '../support/inprocess-env.js';

// A tool command that prints its whole environment: router's keys (and copies of them in other
// variables) are never in it, so never in what the model is sent either.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;

emulatorPerFile('router-tool-env-', (f) => ({ emu, dir, env } = f), (folder) => ({ XDG_STATE_HOME: join(folder, 'xdg'), ROUTER_MCP: '' }));

describe('a tool that prints its environment', () => {
  it('gets neither key, in any variable; the model is sent neither', async () => {
    const out = join(dir, 'env.txt');
    const tools = join(dir, 'tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'get_weather', description: 'the weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, command: `env > ${out}; echo sunny` }]));
    const before = emu.requestLog.length;
    const r = await runInProcess(['chat', '--model', 'local/tools', '--tools', tools, 'weather in Paris'], { env: { ...env, MY_COPY: `Bearer ${env.ROUTER_API_KEY}`, OTHER: 'kept' } });
    expect(r.code, r.stderr).toBe(0);
    const seen = readFileSync(out, 'utf8');
    expect(seen).toContain('OTHER=kept');
    for (const secret of [env.ROUTER_API_KEY!, env.ROUTER_MANAGEMENT_KEY!]) {
      expect(seen).not.toContain(secret);
      expect(JSON.stringify(emu.requestLog.slice(before).map((e) => e.body))).not.toContain(secret);
    }
    expect(seen).not.toMatch(/^MY_COPY=/m);
  });
});

describe('a key router knows written into a tool command or an MCP server line', () => {
  // Before: run as written, so the tool or server had the key in its arguments (and `ps` showed it to every user).
  it('is refused before anything starts or is sent: exit 2, one line, the key never printed', async () => {
    const ran = join(dir, 'ran.txt');
    const tools = join(dir, 'tools-key.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'get_weather', description: 'the weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, command: `echo "$0" > ${ran}; echo sunny ${env.ROUTER_API_KEY}` }]));
    const cases: [string[], string][] = [
      [['chat', '--model', 'local/tools', '--tools', tools, 'weather in Paris'], 'the command of tool get_weather holds a key router knows (****)'],
      [['responses', '--model', 'local/tools', '--tools', tools, 'weather in Paris'], 'the command of tool get_weather holds a key router knows (****)'],
      [['chat', '--model', 'local/tools', '--mcp', `sh -c 'echo > ${ran}' ${env.ROUTER_MANAGEMENT_KEY}`, 'weather in Paris'], 'the command line or URL of an MCP server holds a key router knows (****)'],
      [['chat', '--model', 'local/tools', '--mcp', `http://127.0.0.1:9/mcp?token=${env.ROUTER_API_KEY}`, 'weather in Paris'], 'the command line or URL of an MCP server holds a key router knows (****)'],
    ];
    for (const [args, words] of cases) {
      const before = emu.requestLog.filter((e) => e.method === 'POST').length;
      const r = await runInProcess(args, { env });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.split('\n').filter(Boolean)).toEqual([expect.stringContaining(`error: ${words}`)]);
      expect(r.stderr).not.toContain(env.ROUTER_API_KEY!.slice(9));
      expect(r.stderr).not.toContain(env.ROUTER_MANAGEMENT_KEY!.slice(11));
      expect(emu.requestLog.filter((e) => e.method === 'POST').length).toBe(before);
    }
    expect(() => readFileSync(ran)).toThrow();
  });
});
