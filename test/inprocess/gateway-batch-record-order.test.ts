import { execFileSync } from 'node:child_process';
import { createReadStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { answersHi, localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { call } from '../support/emulator-folder.js';
import { until } from '../support/until.js';
import { writerOf } from '../support/cassette-writer.js';

// A batch over an upstream under --record wrote each result as its answer came and its cassette after,
// off the loop, one write after another: a gateway killed -9 (40 requests, killed at 5 cassettes) went on
// after its restart with every result on disk and 35 exchanges never kept, so a replay of that batch missed
// them. Now a batch request's result waits for its cassette: its cassette's write held (a FIFO at the
// temp file), the next request is not sent, one at a time.
let dir: string;
let up: LocalUpstream;
const yaml = (url: string) => parseProviders(`batch_concurrency: 1\nproviders:\n  - { name: up, base_url: "${url}", models: { t/m: m } }\n`, {});
const requests = ['one', 'two'].map((content) => ({ custom_id: content, body: { messages: [{ role: 'user', content }] } }));
const contentOf = (file: string) => JSON.parse(readFileSync(file, 'utf8')).request.body.messages[0].content;

async function recording(name: string, cassettes: string, run: (e: Emulator, batch: string) => Promise<void>): Promise<void> {
  const e = await startEmulator({ stateDir: join(dir, name), port: 0, batchDelayMs: 0, gateway: { config: yaml(up.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });
  try {
    const created = await call(e, '/v1/batches', { endpoint: '/v1/chat/completions', model: 't/m', completion_window: '24h', requests });
    expect(created.status).toBe(202);
    await run(e, created.body.id);
  } finally {
    await e.close();
  }
}

async function completed(e: Emulator, id: string): Promise<any> {
  for (;;) {
    const seen = (await call(e, `/v1/batches/${id}`)).body;
    if (seen.status === 'completed') return seen;
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-batch-record-order-'));
  up = await localUpstream(answersHi);
});
afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(process.platform !== 'win32')('a batch recorded to cassettes', () => {
  it("writes a request's result only once its cassette is on disk", async () => {
    const first = join(dir, 'first');
    await recording('a', first, async (e, id) => void (await completed(e, id)));
    const name = readdirSync(first).find((f) => contentOf(join(first, f)) === 'one')!;
    const held = join(dir, 'held');
    mkdirSync(held);
    execFileSync('mkfifo', [join(held, `${name}.${writerOf(process.pid)}.tmp`)]);
    const asked = up.seen.length;
    let kept: Promise<string> | undefined;
    // The held write let go (read), once: the gateway's close waits for it.
    const letGo = () =>
      (kept ??= new Promise<string>((resolve) => {
        let text = '';
        createReadStream(join(held, `${name}.${writerOf(process.pid)}.tmp`)).on('data', (d) => (text += d)).on('end', () => resolve(text));
      }));
    await recording('b', held, async (e, id) => {
      try {
        // The first request sent (waited for: at load it came after the 2 s this loop once had), then 2 s for the second to go out as before.
        expect(await until(() => up.seen.length > asked)).toBe(true);
        await until(() => up.seen.length > asked + 1, 2000);
        // Before: the second request went out (and both results were written) while the first's cassette was held.
        expect(up.seen.length).toBe(asked + 1);
        expect((await call(e, `/v1/batches/${id}`)).body.request_counts.completed).toBe(0);
        expect(JSON.parse(await letGo()).request.body.messages[0].content).toBe('one');
        expect((await completed(e, id)).request_counts.completed).toBe(2);
      } finally {
        void letGo();
      }
    });
    expect(readdirSync(held).filter((f) => f.endsWith('.json'))).toHaveLength(2);
  });
});
