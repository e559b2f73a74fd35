import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { answerTokens, holdingUpstream, localUpstream, type LocalUpstream } from '../support/upstreams.js';

// The estimates unbounded requests hold while in flight were in memory only: after a restart the
// first burst held nothing and spent past the balance. They are saved with the state (at its saves
// and at the stop, never a journal line of their own) and read at the start.
const PRICE = 0.001;
const upstream = holdingUpstream(() => 400);
let up: LocalUpstream;
let dir: string;
const started: Emulator[] = [];

beforeAll(async () => {
  up = await localUpstream(upstream.handler);
  dir = mkdtempSync(join(tmpdir(), 'router-estimates-restart-'));
});

afterAll(async () => {
  for (const e of started) await e.close();
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function gateway(): Promise<Emulator> {
  const providers = `providers:\n  - { name: up, base_url: "${up.baseUrl}", models: { test/m: m }, prices: { test/m: { prompt: ${PRICE}, completion: ${PRICE} } } }\n`;
  const e = await startEmulator({ stateDir: join(dir, 'state'), port: 0, gateway: { config: parseProviders(providers, {}) } });
  started.push(e);
  return e;
}

const ask = (e: Emulator, key: string, content: string) =>
  fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', messages: [{ role: 'user', content }] }) });

it('a burst right after a restart holds the estimate the last run learned', async () => {
  const first = await gateway();
  // One answer of 400 tokens at $0.001: the estimate is 0.4.
  const learned = await ask(first, first.store.firstKeys().apiKey, 'learn');
  expect(learned.status).toBe(200);
  // Read whole: the charge (and what it teaches) comes at the answer's end, which a stop before it would cut.
  await learned.text();
  await first.close();
  started.length = 0;
  // Saved with the state, not journaled on its own.
  expect(JSON.parse(readFileSync(join(dir, 'state', 'state.json'), 'utf8')).estimates).toEqual({ '/v1/chat/completions\ntest/m': 0.4 });

  const second = await gateway();
  const { apiKey } = second.store.createWorkspace('after-restart', 0.6);
  upstream.held.length = 0;
  const seenOne = upstream.next();
  const one = ask(second, apiKey, 'hold');
  await seenOne;
  const seenTwo = upstream.next();
  const two = ask(second, apiKey, 'hold');
  await seenTwo;
  // The two in flight hold 0.4 and the 0.2 left. Before: 200 (nothing held after the restart), three answers for 0.6.
  const three = await ask(second, apiKey, 'third');
  expect(three.status).toBe(402);
  upstream.held.splice(0).forEach((res) => answerTokens(res, 400));
  expect([(await one).status, (await two).status]).toEqual([200, 200]);
  expect(second.store.balance('after-restart')).toBeCloseTo(0, 10);
});

it('a state file of an older version (no estimates) still loads; a bad entry is dropped, a table that is none named', async () => {
  for (const e of started.splice(0)) await e.close();
  const file = join(dir, 'state', 'state.json');
  const state = JSON.parse(readFileSync(file, 'utf8'));
  delete state.estimates;
  writeFileSync(file, JSON.stringify(state));
  const e = await gateway();
  expect(e.store.estimates?.size).toBe(0);
  await e.close();
  started.length = 0;
  writeFileSync(file, JSON.stringify({ ...state, estimates: { x: 'big', y: 0.25 } }));
  const dropped = await gateway();
  expect([...dropped.store.estimates!]).toEqual([['y', 0.25]]);
  await dropped.close();
  started.length = 0;
  writeFileSync(file, JSON.stringify({ ...state, estimates: ['big'] }));
  await expect(gateway()).rejects.toThrow(/"estimates" is not an object/);
});

it('a table longer than the 10,000 cap is cut to it at the start, the newest kept', async () => {
  for (const e of started.splice(0)) await e.close();
  const stateDir = join(dir, 'long');
  const file = join(stateDir, 'state.json');
  // A state file whose table is past the cap (edited by hand, or another version's): 10,005 models.
  const first = await startEmulator({ stateDir, port: 0 });
  await first.close();
  const state = JSON.parse(readFileSync(file, 'utf8'));
  const estimates: Record<string, number> = {};
  for (let i = 0; i < 10_005; i++) estimates[`/v1/chat/completions\nold/m${i}`] = 0.01;
  writeFileSync(file, JSON.stringify({ ...state, estimates }));
  const providers = `providers:\n  - { name: up, base_url: "${up.baseUrl}", models: { test/m: m }, prices: { test/m: { prompt: ${PRICE}, completion: ${PRICE} } } }\n`;
  const e = await startEmulator({ stateDir, port: 0, gateway: { config: parseProviders(providers, {}) } });
  started.push(e);
  expect((await ask(e, e.store.firstKeys().apiKey, 'learn')).status).toBe(200);
  await e.close();
  started.length = 0;
  const saved = Object.keys(JSON.parse(readFileSync(file, 'utf8')).estimates as Record<string, number>);
  // Before: 10,006 saved (the cap only kept a full table from growing), and so on at every start.
  expect(saved.length).toBe(10_000);
  expect(saved).toContain('/v1/chat/completions\ntest/m');
  expect(saved).toContain('/v1/chat/completions\nold/m10004');
  expect(saved).not.toContain('/v1/chat/completions\nold/m0');
});
