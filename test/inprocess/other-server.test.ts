import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

// What a user sees when the API root is not the service: another web server, a wrong path, an
// answer of another shape. Each is one line and an exit code, never a result or a file.

let t: CliEnv;
let requests: string;

beforeAll(async () => {
  t = await startCliEnv();
  requests = join(t.dir, 'requests.jsonl');
  writeFileSync(requests, JSON.stringify({ custom_id: 'a', body: { model: 'local/echo', messages: [{ role: 'user', content: 'a' }] } }));
});
afterAll(() => t.close());

/** Runs `fn` with the root of a server that answers every request with `answer`. */
async function serving(answer: (req: IncomingMessage, res: ServerResponse) => void, fn: (root: string) => Promise<void>): Promise<void> {
  const server = createServer((req, res) => {
    req.resume();
    answer(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.close();
  }
}

const apiRootQuestion = (root: string) => `is ${root} the API root (the URL before /v1)?`;

describe('an API root that is not the service', () => {
  it('a 404 that is not the service\'s: names the URL and asks about the root, exit 5', async () => {
    await serving((_, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html>Not Found</html>'), async (root) => {
      const r = await t.run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_API_ROOT: root } });
      expect(r).toMatchObject({ code: 5, stdout: '', stderr: `error: POST /v1/chat/completions: 404 Not Found: not an API answer: ${apiRootQuestion(root)}\n` });
    });
  });

  it('an error that is a web page (a server that takes no POST, a gateway): says so and asks about the root', async () => {
    const page = '<html>\r\n<head><title>405 Not Allowed</title></head>\r\n<body>\r\n<center><h1>405 Not Allowed</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
    for (const status of [405, 502]) {
      await serving((_, res) => res.writeHead(status, { 'content-type': 'text/html' }).end(page), async (root) => {
        const r = await t.run(['--max-retries', '0', 'chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_API_ROOT: root } });
        expect(r).toMatchObject({ stdout: '', stderr: `error: POST /v1/chat/completions: ${status} ${status === 405 ? 'Method Not Allowed' : 'Bad Gateway'}: a web page, not an API answer: ${apiRootQuestion(root)}\n` });
      });
    }
  });

  it('a 200 that is a web page, or not audio where audio was asked: exit 7, no file', async () => {
    const answer = (req: IncomingMessage, res: ServerResponse) => {
      if (req.url!.endsWith('/audio/speech')) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><p>Welcome</p>');
    };
    await serving(answer, async (root) => {
      const env = { ROUTER_API_ROOT: root, ROUTER_MANAGEMENT_KEY: 'sk-rt-mgmt-x' };
      for (const args of [['chat', '--model', 'local/echo', 'hi'], ['chat', '--no-stream', '--model', 'local/echo', 'hi'], ['batch', 'list']]) {
        const path = args[0] === 'chat' ? '/v1/chat/completions' : '/v1/batches';
        expect(await t.run(args, { env })).toMatchObject({ code: 7, stdout: '', stderr: `error: ${root}${path} answered with a web page, not the API: ${apiRootQuestion(root)}\n` });
      }
      const audio = join(t.dir, 'not-audio.mp3');
      const speak = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', audio], { env });
      expect(speak).toMatchObject({ code: 7, stderr: 'error: the service sent application/json instead of audio\n' });
      expect(existsSync(audio)).toBe(false);
    });
  });

  it('JSON of the wrong shape is refused in words, exit 7, never printed as a result', async () => {
    const cases: [string[], string][] = [
      [['chat', '--no-stream', '--model', 'local/echo', 'hi'], 'the service\'s answer is not a chat completion: "choices" is missing or not an array'],
      [['chat', '--model', 'local/echo', 'hi'], 'the service sent application/json where an event stream was asked for'],
      [['responses', '--no-stream', '--model', 'local/echo', 'hi'], 'the service\'s answer is not a response: "output" is missing or not an array'],
      [['embed', 'x', '--model', 'local/embed'], 'the service\'s answer is not a list of embeddings: "data" is missing or not an array'],
      [['decide', '--state-text', 'x', '--model', 'local/judge', '--noul', 'q', 'y'], 'the service\'s answer is not a decision: "answers" is missing or not an object'],
      [['batch', 'list'], 'the service\'s answer is not a list of batches: "data" is missing or not an array'],
      [['batch', 'get', 'batch_x'], 'the service\'s answer is not a batch: "id" is missing or not a string'],
    ];
    await serving((_, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), async (root) => {
      const env = { ROUTER_API_ROOT: root, ROUTER_MANAGEMENT_KEY: 'sk-rt-mgmt-x' };
      for (const [args, line] of cases) expect(await t.run(args, { env })).toMatchObject({ code: 7, stdout: '', stderr: `error: ${line}\n` });
      const create = await t.run(['batch', 'create', requests], { env });
      expect(create).toMatchObject({ code: 7, stdout: '' });
      expect(create.stderr).toMatch(/^error: the answer to the upload could not be read \(the service's answer is not a batch: "id" is missing or not a string\); the batch may exist/);
    });
  });

  it('stream events of the wrong shape: the text before them, one line, exit 7', async () => {
    const chunk = JSON.stringify({ choices: [{ index: 0, delta: { content: 'one ' }, finish_reason: null }] });
    await serving((_, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${chunk}\n\ndata: {"ok":true}\n\ndata: [DONE]\n\n`), async (root) => {
      const env = { ROUTER_API_ROOT: root };
      const chat = await t.run(['chat', '--model', 'local/echo', 'hi'], { env });
      expect(chat).toMatchObject({ code: 7, stdout: 'one ', stderr: 'error: the service\'s answer is not a chat completion chunk: "choices" is missing or not an array\n' });
      const responses = await t.run(['responses', '--model', 'local/echo', 'hi'], { env });
      expect(responses).toMatchObject({ code: 7, stderr: 'error: the service\'s answer is not a Responses stream event: "type" is missing or not a string\n' });
    });
  });

  it('a time no date can hold (created_at 1e300) is shown as the number sent, never an internal error', async () => {
    const batch = { id: 'batch_far', object: 'batch', endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', created_at: 1e300, finalized_at: 1e300, status: 'completed', request_counts: { total: 1, completed: 1, failed: 0 }, error: null };
    const page = { object: 'list', data: [batch], first_id: 'batch_far', last_id: 'batch_far', has_more: false };
    await serving((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.url!.includes('batch_far') ? batch : page)), async (root) => {
      const env = { ROUTER_API_ROOT: root };
      for (const args of [['batch', 'list'], ['batch', 'get', 'batch_far']]) {
        const r = await t.run(args, { env });
        expect(r).toMatchObject({ code: 0, stderr: '' });
        expect(r.stdout).toContain('1e+300');
      }
    });
  });
});
