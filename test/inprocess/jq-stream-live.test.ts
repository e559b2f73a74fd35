import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';
import { waitBound } from '../support/until.js';

// `chat --stream --json --jq FILTER` printed nothing until the stream had ended: the values were held
// for one run of jq at the command's end. jq now runs over what has come whenever it is free. The
// stream here comes through the emulator's gateway from an upstream that, after its first token,
// waits: until the token's filtered line is on the CLI's stdout, or (what the old code needed) a while.
let t: CliEnv;
let gateway: Emulator;
let upstream: LocalUpstream;
let key: string;
/** What let the paused upstream go on: the first line on stdout, or the fallback timer. */
let releasedBy: 'stdout' | 'timer' | undefined;
let release: (by: 'stdout' | 'timer') => void = () => {};

beforeAll(async () => {
  t = await startCliEnv();
  upstream = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sseChunk(null));
    res.write(sseChunk('one'));
    // Only ends a wait the defect makes endless (a CLI that prints nothing until the stream ends): a loaded machine can
    // take seconds to bring the CLI and its jq up before it prints 'one'.
    const fallback = setTimeout(() => release('timer'), waitBound());
    release = (by) => {
      if (releasedBy) return;
      releasedBy = by;
      clearTimeout(fallback);
      res.write(sseChunk('two'));
      res.write(sseChunk('', 'stop'));
      res.write(`data: ${JSON.stringify({ id: 'gen-local', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })}\n\n`);
      res.end('data: [DONE]\n\n');
    };
  });
  const yaml = `providers:\n  - { name: paced, base_url: "${upstream.baseUrl}", models: { test/paced: m }, prices: { test/paced: { prompt: 0.001, completion: 0.002 } } }\n`;
  gateway = await startEmulator({ stateDir: join(t.dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, {}) } });
  key = gateway.store.firstKeys().apiKey;
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await t?.close();
});

it('chat --stream --json --jq prints a filtered line as its chunk comes, before the stream has ended', async () => {
  const stdout = Object.assign(new PassThrough(), { columns: 80 });
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => {
    out += c.toString();
    if (out.includes('one\n')) release('stdout');
  });
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const { main } = await import('../../src/cli/main.js');
  const env = { ...process.env, FORCE_COLOR: undefined, ...t.env, ROUTER_API_ROOT: gateway.apiRoot, ROUTER_API_KEY: key };
  const args = ['chat', '--stream', '--json', '--model', 'test/paced', '--jq', '.choices[0].delta.content // empty', 'say two words'];
  const code = await main(['node', 'router', ...args], { stdin: Readable.from([Buffer.from('')]), stdout, stderr, env, tty: { stdin: false, stdout: false, stderr: false } });
  await new Promise((r) => setImmediate(r));
  expect(code, err).toBe(0);
  // The role-only first chunk has no content (`// empty`); the last one's content is "" (a line of its own, as jq prints it).
  expect(out).toBe('one\ntwo\n\n');
  expect(releasedBy).toBe('stdout');
});
