import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { deadPort, localUpstream, type LocalUpstream } from '../support/upstreams.js';

// Two gateways recording into one folder (docs/gateway.md: `--record-missing` on a shared folder, as
// DEVELOPERS.md runs two processes on the same state). Each cassette is written to a temp file, then
// renamed; both once wrote through the one `<file>.tmp`: one's rename took the other's half-written
// file into place (a cassette that is not JSON stops every later --replay), the other's rename failed
// ("not written: ENOENT"). Two gateways in one process show it: they share the name just the same.
let dir: string;
let up: LocalUpstream;
/** An answer long enough that its write takes more than one write(2): the window the two met in. */
const LONG = 'tide '.repeat(60_000);
const yaml = (url: string) => parseProviders(`providers:\n  - { name: up, base_url: "${url}", models: { t/m: m } }\n`, {});
const body = (content: string) => ({ model: 't/m', messages: [{ role: 'user', content }] });
const ask = async (e: Emulator, content: string) => {
  const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body(content)) });
  return { status: res.status, json: (await res.json()) as { choices?: { message: { content: string } }[] } };
};
const gateway = (name: string, cassettes: string, mode: 'replay-record' | 'replay', url = up.baseUrl) =>
  startEmulator({ stateDir: join(dir, name), port: 0, gateway: { config: yaml(url), cassettes: { dir: cassettes, mode, timing: 0 } } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-record-two-writers-'));
  up = await localUpstream((_req, res, asked) => {
    const content = `${JSON.stringify(asked.messages)} ${LONG}`;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } }));
  });
});
afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('two gateways recording the same requests into one folder write every cassette whole', async () => {
  const cassettes = join(dir, 'shared');
  const said: string[] = [];
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (said.push(String(chunk)), true));
  const prompts = Array.from({ length: 12 }, (_, i) => `prompt ${i}`);
  try {
    const a = await gateway('a', cassettes, 'replay-record');
    const b = await gateway('b', cassettes, 'replay-record');
    try {
      // Each request missing from both: both ask the upstream, both write its cassette, at once.
      const answers = await Promise.all(prompts.flatMap((p) => [ask(a, p), ask(b, p)]));
      expect(answers.map((r) => r.status)).toEqual(prompts.flatMap(() => [200, 200]));
    } finally {
      await a.close();
      await b.close();
    }
  } finally {
    stderr.mockRestore();
  }
  // Before: "record: cassette …json not written: ENOENT: no such file or directory, rename '….json.tmp'".
  expect(said.filter((l) => l.includes('not written'))).toEqual([]);
  const files = readdirSync(cassettes);
  // No temp file left behind, and one whole cassette per request.
  expect(files.filter((f) => !f.endsWith('.json'))).toEqual([]);
  expect(files).toHaveLength(prompts.length);
  for (const f of files) expect(() => JSON.parse(readFileSync(join(cassettes, f), 'utf8'))).not.toThrow();
  // The folder replays every request, the upstream gone.
  const player = await gateway('player', cassettes, 'replay', `http://127.0.0.1:${await deadPort()}/v1`);
  try {
    for (const p of prompts) expect((await ask(player, p)).json.choices?.[0]?.message.content).toContain(p);
  } finally {
    await player.close();
  }
});
