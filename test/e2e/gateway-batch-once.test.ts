import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveApi, spawnServe } from '../support/serve-process.js';
import { waitBound } from '../support/until.js';

// A batch request whose provider may have begun generating it (it timed out once sent, or was cut after the
// answer's head) is not asked of that provider again: the provider bills what it generated, the caller is
// charged once. One it refused before any body (a 503) is still asked again after the pause.
const dir = mkdtempSync(join(tmpdir(), 'router-batch-once-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An upstream counting the generations it begins, by the mode the prompt names: stall, cut, busy (503 once). */
function upstream(): Promise<{ server: Server; root: string; begun: Record<string, number> }> {
  const begun: Record<string, number> = {};
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      const mode = body.model === 'alt' ? 'alt' : String(body.messages[0].content);
      if (mode === 'busy' && !begun.refused) {
        begun.refused = 1;
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"busy"}}');
        return;
      }
      begun[mode] = (begun[mode] ?? 0) + 1;
      if (mode === 'busy' || mode === 'alt') {
        const answer = { id: 'x', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
        return;
      }
      // Generating: the head goes, then a part of the answer; then nothing (stall) or the connection cut.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"x","choices":[');
      if (mode === 'cut') setTimeout(() => res.socket?.destroy(), 50);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, root: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, begun })));
}

describe('a batch over a provider that may have begun a request', () => {
  it('asks it once per request after a timeout or a cut after the head; a 503 before any body is asked again', async () => {
    const up = await upstream();
    const providers = join(dir, 'providers.yaml');
    writeFileSync(providers, `providers:\n  - { name: up, base_url: "${up.root}", timeout_ms: 300, models: { test/chat: m }, prices: { test/chat: { prompt: 0.000001, completion: 0.000002 } } }\n`);
    await runBatch(up, providers, 'state', ['stall', 'cut', 'busy'], async (done) => {
      expect(done.request_counts).toMatchObject({ total: 3, completed: 1, failed: 2 });
      expect(done.results.find((r: any) => r.custom_id === 'busy').response.status_code).toBe(200);
      // Each generation begun once: the old engine asked the stalled and the cut one 3 times each.
      expect(up.begun).toEqual({ stall: 1, cut: 1, refused: 1, busy: 1 });
    });
  });

  it('still falls back to the next provider in the same turn: the stalled one asked once, the other answers', async () => {
    const up = await upstream();
    const providers = join(dir, 'providers-two.yaml');
    writeFileSync(providers, `providers:\n  - { name: up, base_url: "${up.root}", timeout_ms: 300, models: { test/chat: m } }\n  - { name: other, base_url: "${up.root}", models: { test/chat: alt } }\n`);
    await runBatch(up, providers, 'state-two', ['stall'], async (done) => {
      expect(done.request_counts).toMatchObject({ total: 1, completed: 1, failed: 0 });
      expect(done.results[0].response.body.provider).toBe('other');
      expect(up.begun).toEqual({ stall: 1, alt: 1 });
    });
  });
});

/** Runs `modes` as a batch through a gateway over `providers`, then `check`s the batch once it ended. */
async function runBatch(up: { server: Server }, providers: string, state: string, modes: string[], check: (done: any) => Promise<void>): Promise<void> {
  const serve = await spawnServe(['--state', join(dir, state), '--batch-delay-ms', '50', '--providers', providers], { HOME: dir, XDG_CONFIG_HOME: dir, XDG_STATE_HOME: dir });
  try {
    const created = await serveApi(serve, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'test/chat', completion_window: '24h', requests: modes.map((m) => ({ custom_id: m, body: { messages: [{ role: 'user', content: m }], max_tokens: 5 } })) });
    expect(created.status).toBe(202);
    let done: any;
    for (const end = Date.now() + waitBound(); Date.now() < end; ) {
      done = (await serveApi(serve, `/v1/batches/${created.json.id}`)).json;
      if (done.status === 'completed' || done.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await check(done);
  } finally {
    serve.child.kill('SIGTERM');
    await serve.exited;
    up.server.closeAllConnections();
    await new Promise((r) => up.server.close(r));
  }
}
