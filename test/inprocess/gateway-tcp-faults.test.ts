import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';

// A gateway whose provider sits behind a TCP proxy that misbehaves below HTTP: it holds the answer's
// head, stops forwarding after the head or after the first token, or resets the connection there.
// The gateway passes over what the caller has not seen, ends with the error chunk what it has, and
// no request waits past the provider's timeout_ms.
type Cut = 'nothing' | 'head' | 'first-token';
interface Proxy {
  url: string;
  server: Server;
  sockets: Set<Socket>;
}

/** The byte offset where the forwarded answer is cut: nothing of it, its head only, or up to its first token's event. */
function cutAt(text: string, cut: Cut): number | undefined {
  if (cut === 'nothing') return 0;
  const head = text.indexOf('\r\n\r\n');
  if (head < 0) return undefined;
  if (cut === 'head') return head + 4;
  const token = /"(content|delta)":"[^"]/.exec(text.slice(head));
  if (!token) return undefined;
  const end = text.indexOf('\n\n', head + token.index);
  return end < 0 ? undefined : end + 2;
}

/** A TCP proxy to `port` that forwards requests whole and answers up to `cut`, then stalls or resets. */
async function proxy(port: number, cut: Cut, then: 'stall' | 'reset'): Promise<Proxy> {
  const sockets = new Set<Socket>();
  const server = createServer((caller) => {
    sockets.add(caller);
    const up = connect(port, '127.0.0.1');
    caller.pipe(up);
    let seen = '';
    let sent = 0;
    let done = false;
    up.on('data', (d: Buffer) => {
      if (done) return;
      seen += d.toString('latin1');
      const at = cutAt(seen, cut);
      const until = at ?? seen.length;
      if (until > sent) caller.write(Buffer.from(seen.slice(sent, until), 'latin1'));
      sent = until;
      if (at === undefined) return;
      done = true;
      if (then === 'reset') caller.resetAndDestroy();
    });
    for (const s of [caller, up]) s.on('error', () => {});
    caller.on('close', () => {
      sockets.delete(caller);
      up.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`, server, sockets };
}

let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let client: OpenAI;
const proxies: Proxy[] = [];
// Each case's bound counts only from what the proxy lets through, never from the upstream's own pace (a loaded
// machine can take past 400 ms for the upstream's head or first token: a timeout_ms then passed the provider
// over before the cut, and a token case's stream ended cleanly). A stall before any token meets timeout_ms;
// a stall after the first token meets idle_timeout_ms, counted from that token; a reset needs no short bound.
const CASES = [
  ['head-stall', 'nothing', 'stall', 'timeout_ms: 400'],
  ['body-stall', 'head', 'stall', 'timeout_ms: 400'],
  ['token-stall', 'first-token', 'stall', 'idle_timeout_ms: 400'],
  ['head-reset', 'nothing', 'reset', ''],
  ['token-reset', 'first-token', 'reset', ''],
] as const;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-tcp-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  const lines: string[] = [];
  for (const [name, cut, then, bound] of CASES) {
    const p = await proxy(upstream.port, cut, then);
    proxies.push(p);
    // Each faulty provider is first for its model; `good` (the upstream itself) is the fallback.
    lines.push(`  - { name: ${name}, base_url: "${p.url}", api_key_env: UP, ${bound ? `${bound}, ` : ''}responses: true, models: { test/${name}: local/lorem }, embedding_models: { test/${name}-embed: local/embed } }`);
  }
  const all = CASES.map(([name]) => `test/${name}: local/lorem`).join(', ');
  const embeds = CASES.map(([name]) => `test/${name}-embed: local/embed`).join(', ');
  const yaml = `providers:\n${lines.join('\n')}\n  - { name: good, base_url: "${upstream.apiRoot}/v1", api_key_env: UP, responses: true, models: { ${all} }, embedding_models: { ${embeds} } }\n`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, { UP: upstream.store.firstKeys().apiKey }) } });
  client = new OpenAI({ apiKey: gateway.store.firstKeys().apiKey, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0, timeout: 30_000 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  for (const p of proxies) {
    for (const s of p.sockets) s.destroy();
    await new Promise((r) => p.server.close(r));
  }
  rmSync(dir, { recursive: true, force: true });
});

const user = (content: string) => [{ role: 'user' as const, content }];
const metadataOn = { headers: { 'x-router-metadata': 'enabled' } };

/** A streamed chat read to its end: its text, and the error the package threw, if any. */
async function streamed(model: string): Promise<{ text: string; error?: string }> {
  const stream = await client.chat.completions.create({ model, messages: user('write 40 words'), stream: true });
  let text = '';
  try {
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    return { text };
  } catch (err) {
    return { text, error: (err as Error).message };
  }
}

describe('a provider behind a TCP proxy that stalls or resets', () => {
  const expected = (upstream: Emulator) =>
    fetch(`${upstream.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${upstream.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/lorem', messages: user('write 40 words') }) })
      .then((r) => r.json() as Promise<{ choices: { message: { content: string } }[] }>)
      .then((b) => b.choices[0]!.message.content);

  it.each(['head-stall', 'body-stall', 'head-reset'])('%s: a whole answer, a stream, embeddings and Responses come from the next provider, which router_metadata names', async (name) => {
    const c = await client.chat.completions.create({ model: `test/${name}`, messages: user('write 40 words') }, metadataOn);
    expect(c.choices[0]!.message.content).toBe(await expected(upstream));
    const summary = (c as unknown as { router_metadata: { summary: string } }).router_metadata.summary;
    // A timeout names which wait ran out and the setting that bounds it, not a bare "timed out".
    const why = { 'head-stall': "timed out: no answer's head within timeout_ms (400 ms)", 'body-stall': 'timed out: no more of the answer within timeout_ms (400 ms)', 'head-reset': 'connection lost' }[name];
    expect(summary).toContain(`via good (attempt 2); failed: ${name} (${name}: ${why}`);
    const e = await client.embeddings.create({ model: `test/${name}-embed`, input: 'x', dimensions: 3, encoding_format: 'float' });
    expect(e.data[0]!.embedding).toHaveLength(3);
    // A stream that gave no token is passed over unseen.
    expect(await streamed(`test/${name}`)).toEqual({ text: await expected(upstream) });
    const r = await client.responses.create({ model: `test/${name}`, input: 'write 40 words' });
    expect(r.status).toBe('completed');
  });

  it.each([
    ['token-stall', 'no event within idle_timeout_ms \\(400 ms\\)'],
    ['token-reset', 'stream broken'],
  ])('%s: a stream cut after its first token ends with the error chunk, never cleanly', async (name, why) => {
    const { text, error } = await streamed(`test/${name}`);
    expect(text.length).toBeGreaterThan(0);
    expect((await expected(upstream)).startsWith(text)).toBe(true);
    expect(error).toMatch(new RegExp(`^Provider returned an error mid-stream: ${name}: ${why}( \\(UND_ERR_SOCKET\\))?$`));
    // Responses alike: the package's stream helper ends with a failed response, after the first delta.
    const stream = client.responses.stream({ model: `test/${name}`, input: 'write 40 words' });
    let deltas = '';
    let failed: unknown;
    stream.on('response.output_text.delta', (e) => (deltas += e.delta));
    stream.on('response.failed', (e) => (failed = e.response.error));
    const end = await stream.finalResponse().then((r) => r.status, (err: Error) => err.message);
    expect(deltas.length).toBeGreaterThan(0);
    expect(JSON.stringify(failed)).toContain('mid-stream');
    expect(end).toBe('failed');
  });
});
