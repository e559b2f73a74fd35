import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { findModel, round } from '../../src/emulator/models/models.js';
import { SETTLE } from '../support/until.js';

// A caller who hangs up on a fake model's stream pays for the text it was written (the prompt and
// those tokens); a whole answer is charged as before.
let dir: string;
let emulator: Emulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-emu-hang-up-'));
  emulator = await startEmulator({ stateDir: join(dir, 'state'), port: 0 });
});

afterAll(async () => {
  await emulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Streams a lorem answer of `words` words; hangs up after `events` content events (Infinity: reads it all). */
async function stream(ws: string, words: number, events: number) {
  const { apiKey } = emulator.store.createWorkspace(ws, 1);
  const caller = new AbortController();
  const res = await fetch(`${emulator.apiRoot}/v1/chat/completions`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/lorem', stream: true, messages: [{ role: 'user', content: `${words} words` }] }) });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while ([...text.matchAll(/"content":"[^"]/g)].length < events) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  if (events !== Infinity) caller.abort();
  const id = /"id":"(gen-[^"]+)"/.exec(text)![1]!;
  const generation = async () => {
    const got = await fetch(`${emulator.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
    return got.status === 200 ? ((await got.json()) as { data: Record<string, number | boolean> }).data : undefined;
  };
  return { generation };
}

describe('a caller who hangs up on a fake model stream', () => {
  it('after some tokens: charged the prompt and the tokens written to it, and the generation says cancelled', async () => {
    const lorem = findModel('local/lorem')!;
    const { generation } = await stream('emu-cut', 200_000, 5);
    // Before: refunded whole; the caller paid nothing and no generation was kept.
    const g = await vi.waitFor(async () => {
      const kept = await generation();
      if (!kept) throw new Error('no generation kept yet');
      return kept;
    }, SETTLE);
    expect(g.cancelled).toBe(true);
    const sent = g.tokens_completion as number;
    expect(sent).toBeGreaterThanOrEqual(5);
    expect(sent).toBeLessThan(200_000);
    const owed = round(round((g.tokens_prompt as number) * lorem.promptPrice) + round(sent * lorem.completionPrice));
    expect(g.total_cost).toBe(owed);
    const full = round(round((g.tokens_prompt as number) * lorem.promptPrice) + round(200_000 * lorem.completionPrice));
    expect(owed).toBeGreaterThan(0);
    expect(owed).toBeLessThan(full);
    await vi.waitFor(() => expect(emulator.store.balance('emu-cut')).toBeCloseTo(1 - owed, 10), SETTLE);
  });

  it('a whole answer: charged in full, not cancelled', async () => {
    const lorem = findModel('local/lorem')!;
    const { generation } = await stream('emu-whole', 30, Infinity);
    const g = (await generation())!;
    expect(g.cancelled).toBe(false);
    const cost = round(round((g.tokens_prompt as number) * lorem.promptPrice) + round((g.tokens_completion as number) * lorem.completionPrice));
    expect(emulator.store.balance('emu-whole')).toBeCloseTo(1 - cost, 10);
  });
});
