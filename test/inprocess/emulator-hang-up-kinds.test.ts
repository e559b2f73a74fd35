import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { costOf, findModel, round } from '../../src/emulator/models/models.js';
import { SETTLE } from '../support/until.js';

// A caller who hangs up on a fake model's stream pays for what it was written, whatever the stream:
// Responses text, tool calls (chat and Responses), speech. Before, these were given back whole.
let dir: string;
let emulator: Emulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-emu-hang-up-kinds-'));
  emulator = await startEmulator({ stateDir: join(dir, 'state'), port: 0 });
});

afterAll(async () => {
  await emulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Posts as workspace `ws` (credits 1); reads the answer until `enough(text so far)`, then hangs up. */
async function hangUp(ws: string, path: string, body: unknown, enough: (text: string, bytes: number) => boolean) {
  const { apiKey, managementKey } = emulator.store.createWorkspace(ws, 1);
  const key = path.endsWith('/speech') ? managementKey : apiKey;
  const caller = new AbortController();
  const res = await fetch(`${emulator.apiRoot}${path}`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  while (!enough(text, bytes)) {
    const { done, value } = await reader.read();
    if (done) throw new Error('the stream ended before the caller hung up');
    bytes += value.length;
    if (bytes < 1 << 20) text += decoder.decode(value, { stream: true });
  }
  caller.abort();
  const id = res.headers.get('x-generation-id') ?? /"id":"((?:gen|resp)[-_][^"]+)"/.exec(text)![1]!;
  return vi.waitFor(async () => {
    const got = await fetch(`${emulator.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
    if (got.status !== 200) throw new Error(`no generation kept yet (${got.status})`);
    return ((await got.json()) as { data: Record<string, number | boolean> }).data;
  }, SETTLE);
}

/** The generation kept is cancelled, charged its prompt and the tokens it says were written (less than `full`), and so is the balance. */
async function chargedForWhatWasSent(ws: string, g: Record<string, number | boolean>, model: string, fullCompletion: number) {
  const m = findModel(model)!;
  expect(g.cancelled).toBe(true);
  const sent = g.tokens_completion as number;
  expect(sent).toBeGreaterThan(0);
  expect(sent).toBeLessThanOrEqual(fullCompletion);
  const owed = round(round((g.tokens_prompt as number) * m.promptPrice) + round(sent * m.completionPrice));
  expect(g.total_cost).toBe(owed);
  await vi.waitFor(() => expect(emulator.store.balance(ws)).toBeCloseTo(1 - owed, 10), SETTLE);
  return owed;
}

/** A tool whose free-text argument takes the whole prompt: the call's arguments are as long as the prompt. */
const bigTool = { name: 'note', description: 'keep a note', parameters: { type: 'object', properties: { text: { type: 'string', maxLength: 10_000_000 } }, required: ['text'] } };
/** `n` words of 400 letters: long arguments in few tokens (a tool call fits the model's limit whole or not at all). */
const longWords = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + (i % 26)).repeat(400)).join(' ');

describe('a caller who hangs up on a fake model stream of another kind', () => {
  it('a Responses text stream: charged the prompt and the text written; cancelled', async () => {
    const g = await hangUp('resp-cut', '/v1/responses', { model: 'local/lorem', stream: true, input: '200000 words' }, (t) => [...t.matchAll(/"type":"response\.output_text\.delta"/g)].length >= 5);
    const owed = await chargedForWhatWasSent('resp-cut', g, 'local/lorem', 200_000);
    expect(owed).toBeLessThan(costOf(findModel('local/lorem')!, g.tokens_prompt as number, 200_000).cost);
  });

  it('a chat stream of tool calls: charged the arguments written; cancelled', async () => {
    const body = { model: 'local/tools', stream: true, tools: [{ type: 'function', function: bigTool }], messages: [{ role: 'user', content: longWords(1_200) }] };
    const g = await hangUp('tools-cut', '/v1/chat/completions', body, (t) => [...t.matchAll(/"arguments":"[^"]/g)].length >= 20);
    await chargedForWhatWasSent('tools-cut', g, 'local/tools', 16_384);
    // Written in fragments of 1 to 8 characters (20 MB of events): the caller left long before the last of 1,200 words.
    expect(g.tokens_completion).toBeLessThan(1_200);
  });

  it('a Responses stream of a tool call: its arguments (3 MB, in one event) were written whole, so it pays them; cancelled', async () => {
    const body = { model: 'local/tools', stream: true, tools: [{ type: 'function', ...bigTool }], input: longWords(7_000) };
    const g = await hangUp('resp-tools-cut', '/v1/responses', body, (t) => t.includes('"type":"response.function_call_arguments.delta"'));
    await chargedForWhatWasSent('resp-tools-cut', g, 'local/tools', 16_384);
    expect(g.tokens_completion).toBeGreaterThanOrEqual(7_000);
  });

  it('a speech stream: charged the characters voiced in the audio written; cancelled', async () => {
    const input = Array.from({ length: 5_000 }, (_, i) => `word${i}`).join(' ');
    const g = await hangUp('tts-cut', '/v1/audio/speech', { model: 'local/tts', voice: 'alloy', input }, (_t, bytes) => bytes >= 64 * 1024);
    const tts = findModel('local/tts')!;
    expect(g.cancelled).toBe(true);
    const full = costOf(tts, input.length, 0).cost;
    expect(g.total_cost).toBeGreaterThan(0);
    expect(g.total_cost).toBeLessThan(full);
    // A whole number of characters at the per-character price.
    expect(Number.isInteger(round((g.total_cost as number) / tts.promptPrice))).toBe(true);
    await vi.waitFor(() => expect(emulator.store.balance('tts-cut')).toBeCloseTo(1 - (g.total_cost as number), 10), SETTLE);
  });

  it('a speech stream read to its end: charged in full, not cancelled', async () => {
    const { managementKey } = emulator.store.createWorkspace('tts-whole', 1);
    const input = 'a short line to say';
    const res = await fetch(`${emulator.apiRoot}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/tts', voice: 'sage', input }) });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const full = costOf(findModel('local/tts')!, input.length, 0).cost;
    await vi.waitFor(() => expect(emulator.store.balance('tts-whole')).toBeCloseTo(1 - full, 10), SETTLE);
  });
});
