import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';
import { answersHi, deadPort, localUpstream, stall } from '../support/upstreams.js';

// `--record-missing` with the upstream down kept each refused connection (and each connect or head
// timeout) as the request's take: the next run, upstream back, replayed that refusal first, a 502 for
// an outage that was the network's, not the upstream's answer. Now a failure with no HTTP answer is
// not kept under --record-missing; a 4xx or 5xx the upstream gave is (as --record keeps it). And a take
// this run recorded is not replayed back to the same run: its next ask goes upstream, as a live call.
let dir: string;
const BODY = { model: 't/m', messages: [{ role: 'user', content: 'fill the gap' }] };
const yaml = (url: string) => parseProviders(`providers:\n  - { name: up, base_url: "${url}", models: { t/m: m }, timeout_ms: 300 }\n`, {});
const ask = async (e: Emulator) => (await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(BODY) })).status;
const takes = (cassettes: string) => (existsSync(cassettes) ? readdirSync(cassettes).map((f) => JSON.parse(readFileSync(join(cassettes, f), 'utf8')) as Cassette) : []);

async function filling<T>(name: string, url: string, cassettes: string, run: (e: Emulator) => Promise<T>): Promise<T> {
  const e = await startEmulator({ stateDir: join(dir, name), port: 0, gateway: { config: yaml(url), cassettes: { dir: cassettes, mode: 'replay-record', timing: 0 } } });
  try {
    return await run(e);
  } finally {
    await e.close();
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-record-missing-down-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('--record-missing while the upstream cannot be reached', () => {
  it('keeps no take of a refused connection or a timeout: the next run asks the upstream', async () => {
    const cassettes = join(dir, 'down');
    const refused = `http://127.0.0.1:${await deadPort()}/v1`;
    expect(await filling('a', refused, cassettes, ask)).toBe(502);
    const stalled = await stall();
    try {
      expect(await filling('b', stalled.baseUrl, cassettes, ask)).toBe(502);
    } finally {
      await stalled.close();
    }
    // Before: two takes, a refusal and a timeout, each replayed as a 502 before the upstream was asked.
    expect(takes(cassettes)).toEqual([]);
    const up = await localUpstream(answersHi);
    try {
      expect(await filling('c', up.baseUrl, cassettes, ask)).toBe(200);
      expect(up.seen).toHaveLength(1);
    } finally {
      await up.close();
    }
    expect(takes(cassettes).map((c) => [c.take ?? 1, c.response.status, !!c.response.failure])).toEqual([[1, 200, false]]);
  });

  it('keeps a 5xx the upstream answered, and asks again at the same run\'s next ask', async () => {
    const cassettes = join(dir, 'busy');
    let n = 0;
    const flaky = await localUpstream((req, res) => {
      if (n++ > 0) return answersHi(req, res);
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 503, message: 'busy' } }));
    });
    try {
      // Before: the second ask replayed the 503 this run had just kept, without asking.
      expect(await filling('d', flaky.baseUrl, cassettes, async (e) => [await ask(e), await ask(e), await ask(e)])).toEqual([502, 200, 200]);
      expect(flaky.seen).toHaveLength(2);
    } finally {
      await flaky.close();
    }
    expect(takes(cassettes).map((c) => [c.take ?? 1, c.response.status, !!c.response.failure]).sort()).toEqual([
      [1, 503, true],
      [2, 200, false],
    ]);
  });
});
