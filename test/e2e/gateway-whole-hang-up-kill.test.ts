import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { servesKilledAfterEach, stateAtNextStart, type Serve } from '../support/serve-process.js';
import { answerTokens, holdingUpstream, localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// A gateway killed -9 while it reads a whole answer its caller hung up on (docs/gateway.md, Hang-ups): the
// hold is given back at the next start, or the charge kept, once, with the generation that explains it.
// The upstream holds each request until the test answers it (before: a slow fault of 3 s, which a loaded machine
// could outlast before the test read the hold, and the test then waited for a change that had already come).
const dir = mkdtempSync(join(tmpdir(), 'router-whole-kill-'));
const holding = holdingUpstream(() => 40);
let upstream: LocalUpstream;
const serving = servesKilledAfterEach();
const round = (n: number) => Math.round(n * 1e10) / 1e10;

beforeAll(async () => {
  upstream = await localUpstream(holding.handler);
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A gateway on `state` in front of the upstream; the caller hangs up once the upstream holds the request, unanswered. */
async function hangUpOn(state: string, env: Record<string, string> = {}): Promise<{ g: Serve; held: ServerResponse }> {
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/m: m }, prices: { test/m: { prompt: 0.000001, completion: 0.000002 } } }\n`);
  const g = await serving(['--state', state, '--providers', providers], env);
  const arrived = holding.next();
  const caller = new AbortController();
  const answer = fetch(`${g.info.api_root}/v1/chat/completions`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${g.info.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', max_tokens: 40, messages: [{ role: 'user', content: 'hold' }] }) });
  await arrived;
  caller.abort();
  await expect(answer).rejects.toThrow();
  return { g, held: holding.held.at(-1)! };
}

describe('a gateway killed -9 while it reads a whole answer its caller left', () => {
  it('before the answer came: the hold is given back at the next start, nothing charged', async () => {
    const state = join(dir, 'before');
    const { g } = await hangUpOn(state);
    g.child.kill('SIGKILL');
    await g.exited;
    expect(await stateAtNextStart(state)).toEqual({ usage: 0, generations: [] });
  });

  const used = async (g: Serve) => ((await (await fetch(`${g.info.api_root}/v1/credits`, { headers: { authorization: `Bearer ${g.info.management_key}` } })).json()) as { data: { total_usage: number } }).data.total_usage;

  it.each([
    ['as its charge is written (its second journal line, after the hold)', true],
    ['once the charge replaced the hold', false],
  ])('killed %s: charged once, as its generation says', async (_name, atLine) => {
    const state = join(dir, `killed-${atLine}`);
    const { g, held } = await hangUpOn(state, atLine ? { ROUTER_EMULATOR_CRASH_AT: 'journal-line-written:2' } : {});
    if (atLine) answerTokens(held, 40);
    else {
      // The hold was taken before the upstream was asked; the answer's charge replaces it.
      const hold = await used(g);
      expect(hold).toBeGreaterThan(0);
      answerTokens(held, 40);
      await vi.waitFor(async () => expect(await used(g)).not.toBe(hold), SETTLE);
      g.child.kill('SIGKILL');
    }
    await g.exited;
    const { usage, generations } = await stateAtNextStart(state);
    if (atLine) expect(g.child.signalCode).toBe('SIGKILL');
    // Charged, once: the one generation's cost (made again at the start when the kill came before its record).
    expect(generations).toHaveLength(1);
    expect(generations[0]).toMatchObject({ streamed: false, cancelled: false });
    expect(usage).toBeGreaterThan(0);
    expect(usage).toBeCloseTo(round(generations[0]!.total_cost as number), 10);
  });
});
