// What only a process shows: Ctrl-C during a tool run of `chat --tools` leaves no tool process behind once router has exited.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startTestEnv } from '../helpers.js';
import { killDuringCall } from '../support/run-process.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startTestEnv());

describe.skipIf(process.platform !== 'linux')('Ctrl-C during a tool run', () => {
  it('stops a tool that ignores SIGTERM, and what it started, before router exits 130', async () => {
    const pids = join(t.dir, 'tool-pids');
    const tools = join(t.dir, 'stubborn-tools.json');
    // The shell and its background child both ignore SIGTERM (an ignored signal is inherited).
    const command = `trap '' TERM; sleep 60 & echo $! > ${pids}.child; echo $$ > ${pids}; wait`;
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } }, command }]));
    const child = t.spawn(['chat', '--model', 'local/tools', '--tools', tools, 'weather']);
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c));
    const written = (f: string) => existsSync(f) && readFileSync(f, 'utf8').endsWith('\n');
    // Ready is a state, not a time: on a loaded machine the tool may start only after many seconds. What was left behind
    // runs on for its minute; what was stopped is gone. Waited for 30 s at most: below that minute (so one left behind is
    // still seen) by what the call may have taken since it started it; 10 s a loaded machine passed.
    const killed = await killDuringCall(child, 'SIGINT', () => written(pids) && written(`${pids}.child`), [pids, `${pids}.child`], 30_000);
    expect(killed).toEqual({ ready: true, runningAtKill: true, status: 130, left: [] });
    expect(stderr).toBe('error: interrupted\n');
  });

  it.each([
    ['a plain kill of router (timeout(1) sends SIGTERM)', 'SIGTERM', 143],
    ['the terminal closing (SIGHUP)', 'SIGHUP', 129],
  ] as const)('%s ends the tool it runs too', async (_, signal, code) => {
    const pids = join(t.dir, `${signal}-pids`);
    const tools = join(t.dir, `${signal}-tools.json`);
    const command = `sleep 60 & echo $! > ${pids}.child; echo $$ > ${pids}; wait`;
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } }, command }]));
    const child = t.spawn(['chat', '--model', 'local/tools', '--tools', tools, 'weather']);
    const written = (f: string) => existsSync(f) && readFileSync(f, 'utf8').endsWith('\n');
    // As above: ready is a state, not a time; gone within 30 s, under the minute the tool's sleep would run on.
    const killed = await killDuringCall(child, signal, () => written(pids) && written(`${pids}.child`), [pids, `${pids}.child`], 30_000);
    expect(killed).toMatchObject({ ready: true, status: code, left: [] });
  });

  it.each([
    ['Ctrl-C', 'SIGINT', 130],
    ['a plain kill of router', 'SIGTERM', 143],
  ] as const)('%s during a call of an MCP server that ignores EOF and SIGTERM: the server gone', async (_, signal, code) => {
    const pidFile = join(t.dir, `mcp-hang-${signal}.pid`);
    const fixture = join(import.meta.dirname, '..', 'support', 'mcp-fixture-server.mjs');
    const child = t.spawn(['chat', '--model', 'local/tools', '--mcp', `node ${fixture} hang ${pidFile}`, 'hang']);
    // The fixture never ends by itself: waited for within the test's bound (10 s a loaded machine can pass).
    const killed = await killDuringCall(child, signal, () => existsSync(`${pidFile}.called`), [pidFile]);
    expect(killed).toEqual({ ready: true, runningAtKill: true, status: code, left: [] });
  });
});
