import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { waitBound } from '../support/until.js';

// docs/library.md's "Spending" section: each of its programs runs as written, importing the built
// router-cli and router-cli/kit, against an emulator over real HTTP, in a state folder of its own.
const ROOT = resolve(import.meta.dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'library.md'), 'utf8');
const SECTION = PAGE.slice(PAGE.indexOf('\n## Spending\n'));
const programs = [...SECTION.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);

let emu: Emulator;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-library-spending-'));
  emu = await startEmulator({ stateDir: join(dir, 'emu'), port: 0, batchDelayMs: 0 });
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a program inside the package (so that its name resolves to itself, as where it is installed); the emulator answers meanwhile. */
async function runProgram(text: string, stateDir: string): Promise<{ stdout: string; stderr: string }> {
  const file = join(ROOT, `.library-spending-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, text);
  try {
    const env = { ...process.env, ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: emu.store.firstKeys().apiKey, ROUTER_STATE_DIR: stateDir };
    // Stopped with what is left of the test's bound, not at 60 s: at load 90 the batch program passed 60 s with the
    // test's bound 2 minutes from its end.
    return await promisify(execFile)(process.execPath, [file], { encoding: 'utf8', env, timeout: waitBound() });
  } finally {
    rmSync(file, { force: true });
  }
}

it('the Spending section is at the end of docs/library.md and has its three programs', () => {
  expect(SECTION.length).toBeGreaterThan(100);
  expect(SECTION.slice(1)).not.toMatch(/\n## /);
  expect(programs).toHaveLength(3);
});

it('the tool loop under a cost cap runs as written: it answers within the cap, and a cap too small is a typed refusal', async () => {
  const before = emu.requestLog.filter((r) => r.path.endsWith('/chat/completions')).length;
  const r = await runProgram(programs[0]!, mkdtempSync(join(dir, 'state-')));
  expect(r.stderr).toBe('');
  expect(r.stdout).toMatch(/^From the tool results: weather answered: sunny in .+\n1 true\ncost_cap_exceeded\n$/);
  // Two rounds for the answer; the refused loop sent nothing.
  expect(emu.requestLog.filter((q) => q.path.endsWith('/chat/completions')).length - before).toBe(2);
});

it('the batch of prompts under one guard runs as written: every prompt answered, together within the cap', async () => {
  const before = emu.requestLog.filter((r) => r.path.endsWith('/chat/completions')).length;
  const r = await runProgram(programs[1]!, mkdtempSync(join(dir, 'state-')));
  expect(r.stderr).toBe('');
  expect(r.stdout).toBe('one two three four five six true\n');
  expect(emu.requestLog.filter((q) => q.path.endsWith('/chat/completions')).length - before).toBe(6);
});

it('the budgets program runs as written: the call recorded in the ledger; a second run past the budget is BudgetReached', async () => {
  const state = mkdtempSync(join(dir, 'state-'));
  const r = await runProgram(programs[2]!, state);
  expect(r.stderr).toBe('');
  expect(r.stdout).toBe('hi\ntrue\n');
  const line = JSON.parse(readFileSync(join(state, 'usage.jsonl'), 'utf8').trim()) as Record<string, unknown>;
  expect(line).toMatchObject({ profile: 'my-app', command: 'my-app', endpoint: '/v1/chat/completions', model: 'local/echo' });
  // The day's spend past the budget: the same program is refused before it sends.
  writeFileSync(join(state, 'usage.jsonl'), `${JSON.stringify({ time: new Date().toISOString(), profile: 'my-app', command: 'my-app', endpoint: '/v1/chat/completions', cost: 0.75 })}\n`);
  const again = await runProgram(programs[2]!, state);
  expect(again.stderr).toBe('');
  expect(again.stdout).toBe('daily_budget reached: 0.75 spent\ntrue\n');
});
