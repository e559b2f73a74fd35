import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { BIN } from '../helpers.js';
import { localUpstream, sseChunk } from '../support/upstreams.js';

const dir = mkdtempSync(join(tmpdir(), 'router-first-try-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// What `router serve` prints to paste and try runs as printed. Before: with `local_models: false` it printed
// `router chat --model local/lorem "write 12 words"`, a model it does not serve (exit 2, "not a valid model ID").
it('serve --providers prints a chat with a model of the gateway that answers, pasted as printed', async () => {
  const upstream = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${sseChunk('hello from up')}${sseChunk('', 'stop')}data: [DONE]\n\n`);
  });
  const providers = join(dir, 'gateway.yaml');
  writeFileSync(providers, `providers:\n  - { name: up, base_url: "${upstream.baseUrl}", embedding_models: { test/embed: e }, models: { test/chat: x } }\nlocal_models: false\n`);
  const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'state') };
  const serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--providers', providers], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let out = '';
    await new Promise<void>((resolve, reject) => {
      serve.stdout.on('data', (d) => {
        out += d;
        if (/^ {2}router .*\n/m.test(out)) resolve();
      });
      serve.on('exit', () => reject(new Error(`serve exited: ${out}`)));
    });
    const pasted = out.split('\n').filter((l) => l.startsWith('  export ') || l.startsWith('  router '));
    expect(pasted[1]).toBe('  router chat --model test/chat "hello"');
    const script = `${pasted[0]!.trim()}; ${pasted[1]!.trim().replace(/^router /, `"${process.execPath}" "${BIN}" `)}`;
    const running = promisify(execFile)('/bin/sh', ['-c', script], { env });
    running.child.stdin!.end(); // as from a terminal: no piped prompt to wait for
    const ran = await running;
    expect(ran.stdout).toBe('hello from up\n');
  } finally {
    serve.kill('SIGTERM');
    await new Promise((r) => serve.on('close', r));
    await upstream.close();
  }
});
