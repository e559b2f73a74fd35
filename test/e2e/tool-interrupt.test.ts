// What only a process shows: Ctrl-C during a tool run of `chat --tools` leaves no tool process behind once router has exited.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { closedStatus, running } from '../support/run-process.js';

let t: TestEnv;
beforeAll(async () => {
  t = await startTestEnv();
});
afterAll(() => t.close());

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
    const exited = closedStatus(child);
    const written = (f: string) => existsSync(f) && readFileSync(f, 'utf8').endsWith('\n');
    // A state, not a time: on a loaded machine the tool may start only after many seconds.
    expect(await until(() => written(pids) && written(`${pids}.child`))).toBe(true);
    const started = [readFileSync(pids, 'utf8'), readFileSync(`${pids}.child`, 'utf8')].map((p) => Number(p.trim()));
    expect(started.every(running)).toBe(true);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toBe('error: interrupted\n');
    // What was left behind runs on for its minute; what was stopped is gone. Waited for 30 s at most: below that minute
    // (so one left behind is still seen) by what the call may have taken since it started it; 10 s a loaded machine passed.
    await until(() => !started.some(running), 30_000);
    expect(started.filter(running)).toEqual([]);
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
    const exited = closedStatus(child);
    const written = (f: string) => existsSync(f) && readFileSync(f, 'utf8').endsWith('\n');
    // A state, not a time: on a loaded machine the tool may start only after many seconds.
    expect(await until(() => written(pids) && written(`${pids}.child`))).toBe(true);
    const started = [readFileSync(pids, 'utf8'), readFileSync(`${pids}.child`, 'utf8')].map((p) => Number(p.trim()));
    child.kill(signal);
    expect(await exited).toBe(code);
    // As above: under the minute the tool's sleep would run on.
    await until(() => !started.some(running), 30_000);
    expect(started.filter(running)).toEqual([]);
  });

  it.each([
    ['Ctrl-C', 'SIGINT', 130],
    ['a plain kill of router', 'SIGTERM', 143],
  ] as const)('%s during a call of an MCP server that ignores EOF and SIGTERM: the server gone', async (_, signal, code) => {
    const pidFile = join(t.dir, `mcp-hang-${signal}.pid`);
    const fixture = join(import.meta.dirname, '..', 'support', 'mcp-fixture-server.mjs');
    const child = t.spawn(['chat', '--model', 'local/tools', '--mcp', `node ${fixture} hang ${pidFile}`, 'hang']);
    const exited = closedStatus(child);
    expect(await until(() => existsSync(`${pidFile}.called`))).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(running(pid)).toBe(true);
    child.kill(signal);
    expect(await exited).toBe(code);
    // The fixture never ends by itself: waited for within the test's bound (10 s a loaded machine can pass).
    await until(() => !running(pid));
    expect(running(pid)).toBe(false);
  });
});
