import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { closeSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

// A prompt of tens of megabytes piped to `router chat` with no budget (task c9): held about once, not as its
// stdin bytes twice, its JSON text and that text's bytes. A server of this file takes the body whole (the
// emulator refuses one over 32 MiB) and says whether the prompt came as it was.
const bin = resolve('bin/router.cjs');
const dir = mkdtempSync(join(tmpdir(), 'router-c9-large-'));
let server: Server;
let root = '';
let prompt = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const body = JSON.parse(bytes.toString('utf8')) as { messages: { content: string }[] };
      const same = body.messages.at(-1)?.content === prompt && Number(req.headers['content-length']) === bytes.length;
      const content = `${same ? 'same' : 'differs'} ${bytes.length}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'gen-c9', object: 'chat.completion', created: 1, model: 'local/echo', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  root = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

/** `router chat` of the file on stdin in a node whose heap is `heapMb`: its exit status and output. */
function chatInSmallHeap(file: string, heapMb: number, more: string[] = []): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH, HOME: dir, ROUTER_API_ROOT: root, ROUTER_API_KEY: 'sk-c9', ROUTER_STATE_DIR: join(dir, 'state'), ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_KEYCHAIN: 'off' };
  const fd = openSync(file, 'r');
  const child = spawn(process.execPath, [`--max-old-space-size=${heapMb}`, bin, 'chat', '-m', 'local/echo', '--no-stream', ...more], { env, stdio: [fd, 'pipe', 'pipe'] });
  closeSync(fd);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((ok, fail) => child.on('error', fail).on('close', (status) => ok({ status, stdout, stderr })));
}

it('a 30 MB stdin prompt is read, sent and kept within a 48 MB heap, the body the bytes JSON.stringify gives', async () => {
  // ASCII, held as one byte a character (one é would make it two); escapes in it all the same.
  const words = 'lorem "ipsum" dolor\\sit\tamet ';
  prompt = words.repeat(Math.ceil(30e6 / words.length)).trimEnd();
  const file = join(dir, 'prompt.txt');
  writeFileSync(file, `${prompt}\n\n`);
  // Was: out of memory (the body's JSON text made whole, then its bytes: with the prompt, three copies in the heap at once).
  const kept = await chatInSmallHeap(file, 48);
  expect(kept, kept.stderr.slice(0, 2000)).toMatchObject({ status: 0, stderr: '' });
  expect(kept.stdout).toMatch(/^same \d+\n$/);
});
