import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { BIN } from '../helpers.js';
import { localUpstream } from '../support/upstreams.js';
import { shellStatus } from '../support/run-process.js';

const dir = mkdtempSync(join(tmpdir(), 'router-drift-pipe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cassette = (baseUrl: string, content: string) => ({
  provider: 'up',
  recorded_at: '2026-01-01T00:00:00.000Z',
  request: { method: 'POST', url: `${baseUrl}/chat/completions`, headers: { 'content-type': 'application/json' }, body: { model: 'x', messages: [{ role: 'user', content }] } },
  response: { status: 200, headers: { 'content-type': 'application/json' }, after_ms: 1, body: { id: 'a', object: 'chat.completion', created: 1, model: 'x', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } },
});

// `router serve --check-drift DIR | head -1` in CI: the reader gone after the first line ended the check with exit 0,
// the drift it had found unsaid (docs/reliability.md: a closed pipe ends a command with the exit code it had so far).
it('--check-drift into a pipe closed early exits 1 once it found a drift', async () => {
  // The first request answers in another shape (no usage); the second never answers: only the closed pipe ends the run.
  const upstream = await localUpstream((_req, res, body) => {
    const messages = body.messages as { content: string }[];
    if (messages[0]!.content === 'second') return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'b', object: 'chat.completion', created: 1, model: 'x', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }));
  });
  try {
    const cassettes = join(dir, 'cassettes');
    mkdirSync(cassettes);
    writeFileSync(join(cassettes, 'up-x-1.json'), JSON.stringify(cassette(upstream.baseUrl, 'first')));
    writeFileSync(join(cassettes, 'up-x-2.json'), JSON.stringify(cassette(upstream.baseUrl, 'second')));
    const providers = join(dir, 'gateway.yaml');
    writeFileSync(providers, `providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/chat: x } }\n`);
    const child = spawn(process.execPath, [BIN, 'serve', '--providers', providers, '--check-drift', cassettes], { env: { ...process.env, HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone before the first line
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(shellStatus(c, signal))));
    expect({ code, stderr }).toEqual({ code: 1, stderr: '' });
  } finally {
    await upstream.close();
  }
});
