import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { storageHooks } from '../../src/emulator/state/fsutil.js';
import { keyHash } from '../../src/emulator/state/key-usage.js';
import { StateStore } from '../../src/emulator/state/store.js';
import { answersHi, pricedGateway } from '../support/upstreams.js';

// A paid request's key usage rides on its charge's own journal line (`kh` the key's hash, `kc` its
// cost): one write(2) per paid request on the gateway's hot path, where there were two (the charge,
// then a line of the key's usage alone). A kill -9 still keeps both, counted once; journals of older
// versions, with key usage on lines of its own, still replay.
const PRICE = 0.001;
let gw: Awaited<ReturnType<typeof pricedGateway>>;
const copies: string[] = [];

beforeAll(async () => {
  gw = await pricedGateway(answersHi, PRICE);
});

afterAll(async () => {
  await gw?.close();
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

const call = (method: string, path: string, key: string, body?: unknown) => gw.json(method, path, key, body);
const stateDir = () => (gw.gateway.store as StateStore).dir;
const journalLines = (dir: string) =>
  readdirSync(dir)
    .filter((n) => /^charges(\.\d+)?\.jsonl$/.test(n))
    .flatMap((n) => readFileSync(join(dir, n), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>))
    .sort((a, b) => (a.s as number) - (b.s as number));

/** The state folder as a kill -9 now would leave it: a copy, for a store to start from. */
function leftByKill(): string {
  const copy = mkdtempSync(join(tmpdir(), 'router-key-line-'));
  copies.push(copy);
  cpSync(stateDir(), copy, { recursive: true });
  return copy;
}

it("each paid request's key usage is on its charge's journal line, and a kill -9 keeps both once", async () => {
  const { managementKey } = gw.gateway.store.firstKeys();
  const made = await call('POST', '/v1/keys', managementKey, { name: 'one line', limit: 1 });
  expect(made.status).toBe(201);
  const key = made.body.key as string;
  const hash = made.body.data.hash as string;
  const usageBefore = gw.gateway.store.workspace('default').total_usage;
  // The timed save of state.json is held at its rename: the journal's segments stay on disk, as after a kill -9 before it.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  storageHooks.beforeLaterRename = () => gate;
  try {
    const ask = (model: string, extra: Record<string, unknown> = {}) => call('POST', '/v1/chat/completions', key, { model, messages: [{ role: 'user', content: 'hi' }], ...extra });
    const unbounded = await ask('test/m');
    const bounded = await ask('test/m', { max_tokens: 10 });
    const local = await ask('local/echo');
    // Unbounded again: it holds the first one's cost as an estimate while in flight, in memory only.
    const estimated = await ask('test/m');
    for (const res of [unbounded, bounded, local, estimated]) expect(res.status, JSON.stringify(res.body)).toBe(200);
    const costs = [unbounded, bounded, local, estimated].map((r) => r.body.usage.cost as number);
    const lines = journalLines(stateDir());
    // Unbounded: its charge; bounded: its hold, then its settlement; the fake model: its charge; unbounded
    // with an estimate held: its charge alone. No line of key usage alone.
    expect(lines.map((l) => [l.h !== undefined ? 'hold' : l.r !== undefined ? 'settled' : 'charge', l.kh, l.kc])).toEqual([
      ['charge', hash, costs[0]],
      ['hold', undefined, undefined],
      ['settled', hash, costs[1]],
      ['charge', hash, costs[2]],
      ['charge', hash, costs[3]],
    ]);
    expect(lines.filter((l) => 'k' in l)).toEqual([]);
    const total = costs.reduce((a, c) => Math.round((a + c) * 1e10) / 1e10, 0);
    const kept = gw.gateway.store.findKey(key)!;
    expect(kept.usage).toBeCloseTo(total, 10);
    const killed = leftByKill();
    for (let start = 0; start < 2; start++) {
      const again = new StateStore(killed);
      try {
        expect(again.workspace('default').total_usage).toBeCloseTo(usageBefore + total, 10);
        expect(again.findKey(key)!.usage).toBeCloseTo(total, 10);
        expect(again.findKey(key)!.usage_days).toEqual(kept.usage_days);
      } finally {
        again.close();
      }
    }
  } finally {
    release();
    storageHooks.beforeLaterRename = undefined;
  }
});

it('a journal with key usage on lines of its own (older versions) beside new lines replays each once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-key-line-old-'));
  copies.push(dir);
  const store = new StateStore(dir);
  const key = store.addKey('default', 'standard', 'old and new');
  const usage = store.workspace('default').total_usage;
  store.close();
  const hash = keyHash(key);
  const t = Date.parse('2026-11-20T12:00:00Z');
  // What a kill -9 left: an older version's charge and its key's line, then this version's one line.
  writeFileSync(join(dir, 'charges.99.jsonl'), [
    { s: 101, w: 'default', c: 0.25 },
    { s: 102, w: 'default', c: 0.25, k: hash, t },
    { s: 103, w: 'default', c: 0.5, kh: hash, kc: 0.5, t },
  ].map((l) => `${JSON.stringify(l)}\n`).join(''));
  for (let start = 0; start < 2; start++) {
    const again = new StateStore(dir);
    try {
      expect(again.workspace('default').total_usage).toBeCloseTo(usage + 0.75, 10);
      expect(again.findKey(key)!.usage).toBeCloseTo(0.75, 10);
      expect(again.findKey(key)!.usage_days).toEqual({ '2026-11-20': 0.75 });
    } finally {
      again.close();
    }
  }
});
