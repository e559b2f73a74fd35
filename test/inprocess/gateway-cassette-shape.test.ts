import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { answersHi, localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';
import { recordedChats } from '../support/recorded-cassettes.js';

// A cassette was checked for a provider, a request body and a response only: one edited by hand into
// `"chunks": [null]` started, then answered its request with a 500 ("Cannot read properties of null");
// `"status": "200"`, a failure with an unknown reason, `"take": 0` were taken as they came. Now every
// member replay reads is checked when the folder is read: one line naming the file and the member.
let dir: string;
let up: LocalUpstream;
const yaml = (url: string) => parseProviders(`providers:\n  - { name: up, base_url: "${url}", models: { t/m: m, t/s: m } }\n`, {});
const recorded: Record<string, any> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-cassette-shape-'));
  up = await localUpstream((req, res, body) => {
    if (!body.stream) return answersHi(req, res);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${sseChunk(null)}${sseChunk('hi', 'stop')}data: [DONE]\n\n`);
  });
  Object.assign(recorded, await recordedChats(dir, `providers:\n  - { name: up, base_url: "${up.baseUrl}", models: { t/m: m, t/s: m } }\n`));
});

afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A folder holding the recording `kind` edited by `edit`, replayed: the start's error, or '' when it starts. */
async function replayEdited(name: string, kind: 'whole' | 'stream', edit: (c: any) => void): Promise<string> {
  const folder = join(dir, name);
  mkdirSync(folder);
  const c = structuredClone(recorded[kind]);
  edit(c);
  writeFileSync(join(folder, 'up-m-0123456789ab.json'), JSON.stringify(c, null, 2));
  try {
    const e = await startEmulator({ stateDir: join(dir, `state-${name}`), port: 0, gateway: { config: yaml('http://127.0.0.1:9/v1'), cassettes: { dir: folder, mode: 'replay', timing: 0 } } });
    await e.close();
    return '';
  } catch (err) {
    expect((err as Error).name).toBe('CassetteFileError');
    return (err as Error).message;
  }
}

describe('a cassette edited badly by hand', () => {
  it('a recording as written is one', async () => {
    expect(recorded.whole && recorded.stream).toBeTruthy();
    expect(await replayEdited('as-recorded-whole', 'whole', () => {})).toBe('');
    expect(await replayEdited('as-recorded-stream', 'stream', () => {})).toBe('');
  });

  it.each([
    ['null-chunk', 'stream', (c: any): unknown => (c.response.chunks[1] = null), 'response.chunks[1] must be {"after_ms": milliseconds, "data": an event (JSON, or its text)}'],
    ['chunk-time', 'stream', (c: any): unknown => (c.response.chunks[0].after_ms = 'soon'), 'response.chunks[0] must be {"after_ms": milliseconds, "data": an event (JSON, or its text)}'],
    ['chunks-text', 'stream', (c: any): unknown => (c.response.chunks = 'data: hi'), 'response.chunks must be a list'],
    ['status-text', 'whole', (c: any): unknown => (c.response.status = '200'), 'response.status must be an HTTP status (0 for a failure with no answer)'],
    ['no-body', 'whole', (c: any) => delete c.response.body, 'response has none of body, chunks, audio, broken or failure'],
    ['reason', 'whole', (c: any): unknown => (c.response.failure = { reason: 'gone', message: 'x' }), 'response.failure must be {"reason": one of refused, timeout, status, broken, unavailable, missing, stopping, "message": a string}'],
    ['take-0', 'whole', (c: any): unknown => (c.take = 0), 'take must be a whole number from 1'],
    ['headers', 'whole', (c: any): unknown => (c.response.headers = { 'content-type': 1 }), 'response.headers must map names to strings'],
    ['body-list', 'whole', (c: any): unknown => (c.request.body = []), 'no request body (an object)'],
  ] as const)('%s: refused at start, naming the file and the member', async (name, kind, edit, words) => {
    expect(await replayEdited(name, kind, edit)).toBe(`cassette up-m-0123456789ab.json: ${words}`);
  });
});
