import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';
import { deadPort, localUpstream, sseChunk, withoutGatewayIds, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';
import { writerOf } from '../support/cassette-writer.js';

// `--record` into a folder holding an older recording of a request replaces it, and a run killed
// half-way must leave a folder that replays one recording or the other, never a loss or a mix:
// - a run killed while a caller retried after a 503 had overwritten the older take 1 (the same file
//   name) with the 503: replay answered the 503 for ever, the older answer lost;
// - a run killed between writing its new take and removing the older ones left both: replay gave
//   the new take 1, then the older take 2.
let dir: string;
let up: LocalUpstream;
/** What the upstream answers next: a 503, or a whole answer with these words. */
const script: string[] = [];
const yaml = (url: string) => parseProviders(`providers:\n  - { name: up, base_url: "${url}", models: { t/m: m } }\n`, {});
const body = (content: string) => ({ model: 't/m', stream: true, messages: [{ role: 'user', content }] });
const ask = async (e: Emulator, content: string) => {
  const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body(content)) });
  return { status: res.status, text: await res.text() };
};
const gateway = (name: string, cassettes: string, mode: 'record' | 'replay', url = up.baseUrl) => startEmulator({ stateDir: join(dir, name), port: 0, gateway: { config: yaml(url), cassettes: { dir: cassettes, mode } } });
const replayed = async (cassettes: string, content: string, times: number) => {
  const player = await gateway(`play-${Math.random()}`, cassettes, 'replay', `http://127.0.0.1:${await deadPort()}/v1`);
  try {
    const out: string[] = [];
    for (let i = 0; i < times; i++) out.push(withoutGatewayIds((await ask(player, content)).text));
    return out;
  } finally {
    await player.close();
  }
};
const record = async (cassettes: string, content: string, answers: string[]) => {
  const recorder = await gateway(`rec-${Math.random()}`, cassettes, 'record');
  try {
    script.push(...answers);
    const out: string[] = [];
    for (let i = 0; i < answers.length; i++) out.push(withoutGatewayIds((await ask(recorder, content)).text));
    return out;
  } finally {
    await recorder.close();
  }
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-cassette-runs-'));
  up = await localUpstream((_req, res) => {
    const next = script.shift() ?? 'unscripted';
    if (next === '503') {
      res.writeHead(503, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: { code: 503, message: 'busy' } }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${sseChunk(next, 'stop')}data: [DONE]\n\n`);
  });
});

afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a run killed while the caller retried after a 503 leaves the older recording whole', async () => {
  const cassettes = join(dir, 'retry');
  const [old] = await record(cassettes, 'flaky', ['old answer']);
  expect(readdirSync(cassettes)).toHaveLength(1);

  const recorder = await gateway('retry-rec', cassettes, 'record');
  try {
    script.push('503');
    expect((await ask(recorder, 'flaky')).status).toBe(502);
    // Another exchange, kept after the 503's: once its file is there, every write before it is done.
    script.push('other');
    await ask(recorder, 'other');
    await vi.waitFor(() => expect(readdirSync(cassettes).filter((f) => f.endsWith('.json'))).toHaveLength(2), SETTLE);
    // The run dies here, before the retry: the folder is what a kill -9 would leave.
    const flaky = readdirSync(cassettes).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(join(cassettes, f), 'utf8')) as Cassette).filter((c) => JSON.stringify(c.request.body.messages).includes('"flaky"'));
    // Before: the 503, in the older answer's file.
    expect(flaky.map((c) => c.response.failure?.reason)).toEqual([undefined]);
    expect(await replayed(cassettes, 'flaky', 2)).toEqual([old, old]);
  } finally {
    await recorder.close();
  }
  // A run that stops (not killed) keeps what it recorded: the 503 replaces the older recording.
  expect((await replayed(cassettes, 'flaky', 1))[0]).not.toBe(old);
});

it('a run killed between writing its new take and removing the older ones replays the new recording only', async () => {
  const older = join(dir, 'older');
  const newer = join(dir, 'newer');
  await record(older, 'twice', ['first take', 'second take']);
  const [fresh] = await record(newer, 'twice', ['fresh take']);
  const [newFile] = readdirSync(newer);
  // The new take 1 over the older take 1, the older take 2 still there: the folder of such a kill.
  copyFileSync(join(newer, newFile!), join(older, newFile!));
  expect(readdirSync(older)).toHaveLength(2);
  // Before: the new take 1, then the older take 2.
  expect(await replayed(older, 'twice', 2)).toEqual([fresh, fresh]);
  // A --record run then removes the leftover with the older takes.
  const [again] = await record(older, 'twice', ['again']);
  expect(readdirSync(older)).toEqual([newFile]);
  expect(existsSync(join(older, newFile!.replace('.json', '-2.json')))).toBe(false);
  expect(await replayed(older, 'twice', 2)).toEqual([again, again]);
});

it('a run killed while writing the answer that came after a held 503 leaves a recording that answers', async () => {
  const cassettes = join(dir, 'answer-first');
  const [old] = await record(cassettes, 'slow disk', ['old answer']);
  const [oldFile] = readdirSync(cassettes);
  // The answer's file (take 2) as a pipe: its write waits there until this test reads it, as a
  // kill -9 could find it, half-way through what the answer's save writes.
  const pipe = join(cassettes, oldFile!.replace('.json', `-2.json.${writerOf(process.pid)}.tmp`));
  execFileSync('mkfifo', [pipe]);
  const recorder = await gateway('answer-first-rec', cassettes, 'record');
  try {
    script.push('503', 'new answer');
    expect((await ask(recorder, 'slow disk')).status).toBe(502);
    const fresh = await ask(recorder, 'slow disk');
    expect(fresh.text).toContain('new answer');
    // Opened once the answer's write opens it: the folder as a kill at that moment leaves it.
    const reading = await open(pipe, 'r');
    const killedAt = join(dir, 'answer-first-killed');
    mkdirSync(killedAt);
    for (const f of readdirSync(cassettes).filter((f) => f.endsWith('.json'))) copyFileSync(join(cassettes, f), join(killedAt, f));
    await reading.readFile();
    await reading.close();
    // Before: the 503 had been written over the older answer's file first: replay answered 502 for ever.
    expect(await replayed(killedAt, 'slow disk', 1)).toEqual([old]);
  } finally {
    await recorder.close();
  }
});
