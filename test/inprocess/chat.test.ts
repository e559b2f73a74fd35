import { describe, expect, it } from 'vitest';
import { post, sharedCliEnv, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
sharedCliEnv((e) => (t = e));

const chatRequests = () => t.requests().filter((r) => r.path === '/v1/chat/completions');

describe('router chat', () => {
  it('streams the answer to stdout and nothing else', async () => {
    const r = await t.run(['chat', '--model', 'local/echo', 'hello there, world']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('hello there, world\n');
    expect(r.stderr).toBe('');
    const [req] = chatRequests();
    expect(req!.body.stream).toBe(true);
    expect(req!.body.messages).toEqual([{ role: 'user', content: 'hello there, world' }]);
  });

  it('reads the prompt from stdin', async () => {
    const r = await t.run(['chat', '--model', 'local/echo'], { input: 'piped prompt\n' });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('piped prompt\n');
  });

  it('joins arguments and stdin when "-" is given', async () => {
    const r = await t.run(['chat', '--model', 'local/echo', 'Summarize:', '-'], { input: 'the text' });
    expect(r.stdout).toBe('Summarize:\n\nthe text\n');
  });

  it('prints the chat.completion object with --json (non-streaming)', async () => {
    const r = await t.run(['chat', '--json', '--model', 'local/lorem', '--max-tokens', '5', 'write 30 words']);
    expect(r.code).toBe(0);
    const c = JSON.parse(r.stdout);
    expect(c.object).toBe('chat.completion');
    expect(c.choices[0].finish_reason).toBe('length');
    expect(c.usage.completion_tokens).toBe(5);
    expect(c.usage.total_tokens).toBe(c.usage.prompt_tokens + 5);
    expect(c.usage.cost).toBeGreaterThan(0);
    expect(chatRequests()[0]!.body.stream).toBe(false);
    expect(chatRequests()[0]!.body.max_completion_tokens).toBe(5);
  });

  it('prints chunks as JSONL with --stream --json, usage in the last chunk', async () => {
    // spec: chat.stream
    const r = await t.run(['chat', '--stream', '--json', '--model', 'local/echo', 'a b c']);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.every((l) => l.object === 'chat.completion.chunk')).toBe(true);
    const text = lines.map((l) => l.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('a b c');
    const last = lines.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage.completion_tokens).toBe(3);
  });

  it('is deterministic for local/lorem and reports usage on stderr with --usage', async () => {
    const a = await t.run(['chat', '--model', 'local/lorem', '--usage', 'write 12 words']);
    const b = await t.run(['chat', '--model', 'local/lorem', '--no-stream', 'write 12 words']);
    expect(a.stdout).toBe(b.stdout);
    expect(a.stdout.trim().split(/\s+/)).toHaveLength(12);
    expect(a.stderr).toMatch(/^usage: \d+ prompt \+ \d+ completion = \d+ tokens, cost \$0\.\d+\n$/);
  });

  it('sends every option flag under its wire name', async () => {
    const r = await t.run([
      'chat', '--model', 'local/echo', '--system', 'be brief', '--temperature', '0.5', '--top-p', '0.9', '--top-k', '40',
      '--frequency-penalty', '-1', '--presence-penalty', '1.5', '--repetition-penalty', '1.1', '--seed', '7',
      '--stop', 'END', '--stop', 'STOP', '--top-logprobs', '3', '--session', 'sess-1', '--metadata', 'team=a',
      '--metadata', 'run=2', '--user', 'u1', '--provider-only', 'local-beta', '--no-fallbacks', '--models', 'local/lorem',
      '--reasoning-effort', 'low', '--service-tier', 'flex', '--response-format', 'json_object', '--min-p', '0.1', 'hi',
    ]);
    expect(r.code).toBe(0);
    const body = chatRequests()[0]!.body;
    expect(body).toMatchObject({
      model: 'local/echo', models: ['local/lorem'], temperature: 0.5, top_p: 0.9, top_k: 40, frequency_penalty: -1,
      presence_penalty: 1.5, repetition_penalty: 1.1, seed: 7, stop: ['END', 'STOP'], logprobs: true, top_logprobs: 3,
      session_id: 'sess-1', metadata: { team: 'a', run: '2' }, user: 'u1', provider: { only: ['local-beta'], allow_fallbacks: false },
      reasoning: { effort: 'low' }, service_tier: 'flex', response_format: { type: 'json_object' }, min_p: 0.1,
    });
    expect(body.messages[0]).toEqual({ role: 'system', content: 'be brief' });
  });

  it('falls back through --models and reports routing metadata on request', async () => {
    const r = await t.run(['chat', '--model', 'local/unavailable', '--models', 'local/echo', '--router-metadata', '--no-stream', 'hey']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('hey\n');
    expect(r.stderr).toMatch(/router: chat: local\/unavailable -> local\/echo via local-alpha \(attempt 2\)/);
    expect(chatRequests()[0]!.headers['x-router-experimental-metadata']).toBe('enabled');
  });
});

describe('a model the service does not know', () => {
  it('is refused with the nearest known id and where the list is (exit 2)', async () => {
    t.clearRequests();
    const r = await t.run(['chat', '--model', 'local/ech', 'hi']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: POST /api/v1/chat/completions: 400 Bad Request: local/ech is not a valid model ID (did you mean local/echo? The list: router models)\n`);
    expect(t.requests().map((q) => `${q.method} ${q.path}`)).toEqual(['POST /v1/chat/completions', 'GET /v1/models']);
    const far = await t.run(['chat', '--model', 'someone/else', 'hi']);
    expect(far.stderr).toBe(`error: POST /api/v1/chat/completions: 400 Bad Request: someone/else is not a valid model ID (the list: router models)\n`);
  });
});

describe('bad input is refused before any request', () => {
  // spec: chat.temperature, chat.top-p, chat.penalties, chat.top-logprobs, chat.stop, chat.metadata, chat.session-id
  const cases: [string[], RegExp][] = [
    [['chat', '--temperature', '2.5', 'x'], /temperature.*between 0 and 2/],
    [['chat', '--top-p', '1.2', 'x'], /top-p.*between 0 and 1/],
    [['chat', '--frequency-penalty', '-3', 'x'], /between -2 and 2/],
    [['chat', '--presence-penalty', 'abc', 'x'], /^error: option '--presence-penalty <x>' argument 'abc' is invalid: not a number; see "router chat --help"$/m],
    [['chat', '--top-logprobs', '21', 'x'], /between 0 and 20/],
    // A multiplier (1 = none): 0 or less was sent.
    [['chat', '--repetition-penalty', '0', 'x'], /^error: option '--repetition-penalty <x>' argument '0' is invalid: must be more than 0 \(a multiplier: 1 is normal\); see "router chat --help"$/m],
    [['chat', '--repetition-penalty=-1', 'x'], /must be more than 0/],
    [['chat', '--max-tokens', '0', 'x'], /at least 1/],
    [['chat', '--stop', 'a', '--stop', 'b', '--stop', 'c', '--stop', 'd', '--stop', 'e', 'x'], /at most 4/],
    [['chat', '--metadata', 'novalue', 'x'], /key=value/],
    [['chat', '--session', 'x'.repeat(257), 'x'], /at most 256/],
    [['chat', '--reasoning-effort', 'huge', 'x'], /is invalid: allowed choices are [a-z, ]+[a-z]; see "router chat --help"$/m],
    [['chat', '--bogus', 'x'], /unknown option '--bogus'/],
    [['chat'], /no prompt/],
  ];
  for (const [args, message] of cases) {
    it(`${args.slice(1, 3).join(' ') || '(no prompt)'} -> exit 2`, async () => {
      t.clearRequests();
      const r = await t.run(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stdout).toBe('');
      expect(t.requests()).toHaveLength(0);
    });
  }

  it('a model of the wrong shape from ROUTER_MODEL is named as such, before any request', async () => {
    t.clearRequests();
    const r = await t.run(['chat', 'x'], { env: { ROUTER_MODEL: 'gpt-4o' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: ROUTER_MODEL must look like <author>/<slug> or name an alias, got "gpt-4o" (router aliases list)\n');
    expect(t.requests()).toHaveLength(0);
  });

  it('17 metadata pairs are refused', async () => {
    const args = ['chat'];
    for (let i = 0; i < 17; i++) args.push('--metadata', `k${i}=v`);
    const r = await t.run([...args, 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/at most 16/);
    expect(t.requests()).toHaveLength(0);
  });

  it('no key: exit 3 and nothing sent', async () => {
    const r = await t.run(['chat', 'hi'], { env: { ROUTER_API_KEY: '' } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^error: no API key/);
    expect(t.requests()).toHaveLength(0);
  });
});

describe('server answers', () => {
  it('401 for a wrong key: exit 3, the key is not echoed', async () => {
    const r = await t.run(['chat', 'hi'], { env: { ROUTER_API_KEY: 'sk-rt-v1-wrongwrongwrong' } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/Invalid API key/);
    expect(r.stderr).not.toContain('wrongwrongwrong');
  });

  it('402 when the balance does not cover a request: exit 4', async () => {
    // spec: gen.credit-402
    const ws = await t.admin('workspaces', { credits: 0.00015 });
    const env = { ROUTER_API_KEY: ws.api_key };
    const first = await t.run(['chat', '--model', 'local/lorem', 'write 50 words'], { env });
    expect(first.code).toBe(0);
    const second = await t.run(['chat', '--model', 'local/lorem', 'write 50 words'], { env });
    expect(second.code).toBe(4);
    expect(second.stderr).toMatch(/Insufficient credits/);
  });

  it('emulator validation: each rule gives 400 with the envelope', async () => {
    const bodies: [unknown, RegExp][] = [
      [{ messages: [] }, /at least 1/],
      [{ messages: [{ role: 'user', content: 'x' }], temperature: 2.1 }, /temperature/],
      [{ messages: [{ role: 'user', content: 'x' }], top_p: -0.1 }, /top_p/],
      [{ messages: [{ role: 'user', content: 'x' }], frequency_penalty: 2.5 }, /frequency_penalty/],
      [{ messages: [{ role: 'user', content: 'x' }], presence_penalty: -2.5 }, /presence_penalty/],
      [{ messages: [{ role: 'user', content: 'x' }], stop: ['a', 'b', 'c', 'd', 'e'] }, /at most 4/],
      [{ messages: [{ role: 'user', content: 'x' }], top_logprobs: 21 }, /top_logprobs/],
      [{ messages: [{ role: 'user', content: 'x' }], metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, /16 pairs/],
      [{ messages: [{ role: 'user', content: 'x' }], metadata: { ['k'.repeat(65)]: 'v' } }, /64 characters/],
      [{ messages: [{ role: 'user', content: 'x' }], metadata: { k: 'v'.repeat(513) } }, /512 characters/],
      [{ messages: [{ role: 'user', content: 'x' }], session_id: 's'.repeat(257) }, /256/],
      [{ messages: [{ role: 'user', content: 'x' }], model: 'nope' }, /author/],
      [{ messages: [{ role: 'user', content: 'x' }], model: 'nobody/nothing' }, /not a valid model/],
    ];
    for (const [body, message] of bodies) {
      const r = await post(t, '/v1/chat/completions', body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.json.error.code).toBe(400);
      expect(r.json.error.message).toMatch(message);
    }
  });

  it('body session_id wins over the x-session-id header', async () => {
    // spec: chat.session-header
    t.clearRequests();
    const r = await post(t, '/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }], session_id: 's'.repeat(10) }, { 'x-session-id': 'h'.repeat(300) });
    expect(r.status).toBe(200);
  });

  it('the current opt-in header name also adds router_metadata', async () => {
    const r = await post(t, '/v1/chat/completions', { model: 'local/echo', messages: [{ role: 'user', content: 'x' }] }, { 'x-router-metadata': 'enabled' });
    expect(r.json.router_metadata.requested).toBe('local/echo');
    const plain = await post(t, '/v1/chat/completions', { model: 'local/echo', messages: [{ role: 'user', content: 'x' }] });
    expect(plain.json.router_metadata).toBeUndefined();
  });
});
