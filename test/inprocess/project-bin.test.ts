import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { commandTool, connectMcp, ToolSourceError } from '../../src/kit/index.js';
import { runInProcess } from '../support/inprocess.js';

// A program run as `node prog.js` in a project that did `npm install @modelcontextprotocol/server-everything` has
// no node_modules/.bin on PATH (npx and npm scripts add it): the command not found is said with where it is installed.
// The tests run in this repository, which installed that server: a PATH without its bin is the newcomer's.
const ROOT = resolve(import.meta.dirname, '..', '..');
const BIN = relative(process.cwd(), join(ROOT, 'node_modules', '.bin', 'mcp-server-everything'));
const PLAIN = { PATH: '/usr/local/bin:/usr/bin:/bin' };
const hint = `the command is not on PATH but is installed in this project, ${BIN}: give that path, or run the program with npx or an npm script`;

let emu: Emulator;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-project-bin-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

it('an MCP server installed in the project but not on PATH: its error names where it is', async () => {
  const err = await connectMcp('mcp-server-everything stdio', { env: PLAIN }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ToolSourceError);
  expect((err as ToolSourceError).message).toBe(`MCP server mcp-server-everything stdio: could not start: ${hint}`);
});

it('a command installed nowhere keeps its words', async () => {
  const err = await connectMcp('no-such-mcp-server-here', { env: PLAIN }).catch((e: unknown) => e);
  expect((err as Error).message).toBe('MCP server no-such-mcp-server-here: could not start: the command was not found (install it, or give its full path)');
});

it('a command tool installed in the project, as argv or a shell line: the model and the program are told where it is', async () => {
  for (const command of [['mcp-server-everything', 'stdio'], 'mcp-server-everything stdio']) {
    const tool = commandTool({ name: 'everything' }, command, PLAIN);
    const r = await tool.run({}, new AbortController().signal);
    expect(r).toMatchObject({ ok: false, code: 127, notRunnable: hint, text: `could not run the command: ${hint}` });
  }
  const none = await commandTool({ name: 'none' }, ['no-such-command-here'], PLAIN).run({}, new AbortController().signal);
  expect(none).toMatchObject({ ok: false, code: 127 });
  expect((none as { notRunnable?: string }).notRunnable).toBeUndefined();
});

it('router chat says it on stderr, for --mcp and for a --tools command', async () => {
  const env = { ...PLAIN, ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: emu.store.firstKeys().apiKey, ROUTER_CONFIG_DIR: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'xdg'), ROUTER_PROFILE: '', ROUTER_MODEL: '' };
  const r = await runInProcess(['chat', '--model', 'local/tools', '--mcp', 'mcp-server-everything stdio', 'hi'], { env });
  expect(r).toMatchObject({ code: 12, stderr: `error: MCP server mcp-server-everything stdio: could not start: ${hint}\n` });
  const tools = join(dir, 'tools.json');
  writeFileSync(tools, JSON.stringify([{ type: 'function', name: 'everything', parameters: { type: 'object', properties: {} }, command: ['mcp-server-everything', 'stdio'] }]));
  const t = await runInProcess(['chat', '--model', 'local/tools', '--tools', tools, 'everything'], { env });
  expect(t.stderr).toContain(`warning: tool everything: its command was not found (exit 127): ${hint}\n`);
});

it("looks no further up than the project's root (package.json or .git), as npm does", async () => {
  const { projectBin } = await import('../../src/kit/project-bin.js');
  const outer = join(dir, 'outer');
  mkdirSync(join(outer, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(join(outer, 'node_modules', '.bin', 'tool'), '#!/bin/sh\n', { mode: 0o755 });
  // A folder below the bin, in no project: found from there (two folders up).
  mkdirSync(join(outer, 'loose', 'deeper'), { recursive: true });
  expect(await projectBin('tool', join(outer, 'loose', 'deeper'))).toBe(join('..', '..', 'node_modules', '.bin', 'tool'));
  // A project of its own below it: the outer folder's bin is none of its (was: "../node_modules/.bin/tool").
  for (const marker of ['package.json', '.git']) {
    const project = join(outer, `project-${marker}`);
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, marker), '{}');
    expect(await projectBin('tool', join(project, 'src')), marker).toBeUndefined();
  }
});
