import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import type { Emulator } from '../../src/emulator/server.js';
import { emulatorFolder } from '../support/emulator-folder.js';
import { breakingProviders, breakingUpstream, lastFrame, STREAM_CASES, WHOLE_CASES } from '../support/break-causes.js';
import { startedForAll } from '../support/for-all.js';
import { deadPort } from '../support/upstreams.js';

// A failure recorded in a cassette replays with the cause it had live: a stream's break (an error chunk,
// a stall the provider's idle_timeout_ms let go) and a whole answer's error (an overload, a timeout said
// in words, a rate limit). Before: a replayed stall was a plain break (`provider_unavailable`, its
// timeout lost), and a recorded error answer kept only its words, so its cause was lost on replay.
const folder = emulatorFolder('router-replay-break-causes-');
const upstream = startedForAll(breakingUpstream);
let player: Emulator;
/** What each request got live, while it was recorded. */
const live: [number, string][] = [];

/** What the caller hears of `body` on `path`: the status, and the cause (`error_type`) the answer or a stream's last frame says. */
async function causeOf(e: Emulator, path: string, body: Record<string, unknown>): Promise<[number, string]> {
  const res = await fetch(`${e.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  const said = body.stream ? lastFrame(text) : JSON.parse(text);
  const error = said.error ?? said.response?.error;
  return [res.status, error.metadata?.error_type ?? error.error_type];
}

const ASKED: [string, string, Record<string, unknown>, string][] = [
  ...STREAM_CASES.map((c): [string, string, Record<string, unknown>, string] => [`${c.name} (stream)`, '/v1/chat/completions', { model: 'test/m', stream: true, messages: [{ role: 'user', content: c.name }] }, c.cause]),
  ...STREAM_CASES.map((c): [string, string, Record<string, unknown>, string] => [`${c.name} (Responses stream)`, '/v1/responses', { model: 'test/r', stream: true, input: c.name }, c.cause]),
  ['stall (stream)', '/v1/chat/completions', { model: 'test/m', stream: true, messages: [{ role: 'user', content: 'stall' }] }, 'timeout'],
  ...WHOLE_CASES.map((c): [string, string, Record<string, unknown>, string] => [c.name, '/v1/chat/completions', { model: 'test/m', messages: [{ role: 'user', content: c.name }] }, c.cause]),
];

beforeAll(async () => {
  const cassettes = join(folder.dir, 'cassettes');
  // A stall is let go after 300 ms without an event; replayed, it breaks as late again.
  const recorder = await folder.start('recorder', { gateway: { config: parseProviders(breakingProviders(upstream.baseUrl, ', idle_timeout_ms: 300'), { UP_KEY: 'k' }), cassettes: { dir: cassettes, mode: 'record' } } });
  for (const [, path, body] of ASKED) live.push(await causeOf(recorder, path, body));
  await folder.stop(recorder);
  const dead = `http://127.0.0.1:${await deadPort()}/v1`;
  player = await folder.start('player', { gateway: { config: parseProviders(breakingProviders(dead), { UP_KEY: 'k' }), cassettes: { dir: cassettes, mode: 'replay', timing: 0 } } });
});

describe('a failure recorded, then replayed', () => {
  it.each(ASKED.map((a, i) => [...a, i] as const))('%s: the same cause and status as live', async (_name, path, body, cause, i) => {
    expect(live[i]![1]).toBe(cause);
    expect(await causeOf(player, path, body)).toEqual(live[i]);
  });
});
