/**
 * The spec's request and stream rules, one case per rule, over raw HTTP against the emulator. Each case is
 * named by its rule id in the trace table of docs/conformance.md (`spec: <id>`).
 */
import { describe, expect, it } from 'vitest';
import { post, startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv());

type Key = 'api' | 'management' | 'none' | 'wrong';
interface Case {
  /** Bodies the spec accepts (200/202) and bodies it refuses (the status named). */
  ok?: unknown[];
  refused?: [unknown, number, RegExp?][];
  path: string;
  key?: Key;
  headers?: Record<string, string>;
  /** The status of an accepted body (200 unless said). */
  okStatus?: number;
  /** What an accepted answer must hold. */
  answer?: (json: any, headers: Headers) => void;
}

const msg = (extra: object = {}) => ({ model: 'local/echo', messages: [{ role: 'user', content: 'x' }], ...extra });
const resp = (extra: object = {}) => ({ model: 'local/echo', input: 'x', ...extra });
const emb = (extra: object = {}) => ({ model: 'local/embed', input: 'x', ...extra });
const tts = (extra: object = {}) => ({ model: 'local/tts', input: 'hi', voice: 'alloy', ...extra });
const decide = (extra: object = {}) => ({ model: 'local/judge', state: 'x', questions: { q: { type: 'noul', instructions: 'yes?' } }, ...extra });
const clip = { type: 'input_audio', input_audio: { data: 'data:audio/wav;base64,UklGRg==' } };
const words = (n: number, c = 'k') => c.repeat(n);
const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
const chat = '/v1/chat/completions';
// spec: errors.error-type
const CANONICAL_ERROR_TYPES = 'context_length_exceeded max_tokens_exceeded token_limit_exceeded string_too_long authentication permission_denied payment_required rate_limit_exceeded provider_overloaded provider_unavailable invalid_request invalid_prompt not_found precondition_failed payload_too_large unprocessable content_policy_violation refusal invalid_image image_too_large image_too_small unsupported_image_format image_not_found image_download_failed server timeout unmapped'.split(' ');
const responses = '/v1/responses';

const CASES: Record<string, Case> = {
  'spec: chat.messages': { path: chat, ok: [msg()], refused: [[{ model: 'local/echo', messages: [] }, 400, /at least 1/], [{ model: 'local/echo' }, 400]] },
  'spec: chat.temperature': { path: chat, ok: [msg({ temperature: 0 }), msg({ temperature: 2 })], refused: [[msg({ temperature: 2.01 }), 400, /temperature/], [msg({ temperature: -0.1 }), 400]] },
  'spec: chat.penalties': { path: chat, ok: [msg({ frequency_penalty: -2, presence_penalty: 2 })], refused: [[msg({ frequency_penalty: 2.5 }), 400], [msg({ presence_penalty: -2.5 }), 400]] },
  'spec: chat.top-p': { path: chat, ok: [msg({ top_p: 0 }), msg({ top_p: 1 })], refused: [[msg({ top_p: 1.01 }), 400, /top_p/]] },
  'spec: chat.top-logprobs': { path: chat, ok: [msg({ logprobs: true, top_logprobs: 20 }), msg({ top_logprobs: 0 })], refused: [[msg({ top_logprobs: 21 }), 400]] },
  'spec: chat.provider-dependent': { path: chat, ok: [msg({ repetition_penalty: 2.5, min_p: 1.5, top_a: 3, top_k: 1000 })] },
  'spec: chat.stop': { path: chat, ok: [msg({ stop: ['a', 'b', 'c', 'd'] }), msg({ stop: 'a' })], refused: [[msg({ stop: ['a', 'b', 'c', 'd', 'e'] }), 400, /at most 4/]] },
  'spec: chat.max-tokens': { path: chat, ok: [msg({ max_tokens: 16 }), msg({ max_completion_tokens: 5 })] },
  'spec: chat.reasoning-effort': {
    path: chat,
    ok: ['max', 'xhigh', 'high', 'medium', 'low', 'minimal', 'none', null].map((e) => msg({ reasoning_effort: e })).concat([msg({ reasoning_effort: 'low', reasoning: { effort: 'low' } })]),
    refused: [[msg({ reasoning_effort: 'huge' }), 400, /reasoning_effort/], [msg({ reasoning_effort: 'low', reasoning: { effort: 'high' } }), 400, /conflicts/]],
  },
  'spec: chat.modalities': { path: chat, ok: [msg({ modalities: ['text', 'image', 'audio'] })], refused: [[msg({ modalities: ['video'] }), 400, /text, image, audio/]] },
  'spec: chat.service-tier': {
    path: chat,
    ok: ['auto', 'default', 'fast', 'flex', 'priority', 'scale', 'ultrafast', null].map((s) => msg({ service_tier: s })),
    refused: [[msg({ service_tier: 'turbo' }), 400, /service_tier/]],
  },
  'spec: chat.route': { path: chat, ok: [msg({ route: 'fallback' }), msg({ route: 'sort' }), msg({ route: null })], refused: [[msg({ route: 'random' }), 400, /fallback, sort/]] },
  'spec: chat.stop-conditions': { path: chat, ok: [msg({ stop_server_tools_when: [{ type: 'step_count_is', step_count: 2 }, { type: 'max_cost', max_cost_in_dollars: 0.1 }] })], refused: [[msg({ stop_server_tools_when: [] }), 400, /at least 1/]] },
  'spec: chat.metadata': {
    path: chat,
    ok: [msg({ metadata: { ...pairs(15), [words(64)]: words(512, 'v') } })],
    refused: [[msg({ metadata: pairs(17) }), 400, /16 pairs/], [msg({ metadata: { [words(65)]: 'v' } }), 400, /64/], [msg({ metadata: { k: words(513) } }), 400, /512/], [msg({ metadata: { 'a[b]': 'v' } }), 400, /brackets/]],
  },
  'spec: chat.session-id': { path: chat, ok: [msg({ session_id: words(256) })], refused: [[msg({ session_id: words(257) }), 400, /256/]] },
  'spec: chat.user': { path: chat, ok: [msg({ user: words(256) })], refused: [[msg({ user: words(257) }), 400, /256/]] },
  'spec: gen.model-id': { path: chat, ok: [msg({ model: 'local/echo' })], refused: [[msg({ model: 'echo' }), 400, /author/], [msg({ model: 'nobody/nothing' }), 400, /not a valid model/]] },
  'spec: chat.models-fallback': { path: chat, ok: [msg({ model: 'local/unavailable', models: ['local/echo'] })], refused: [[msg({ models: 'local/echo' }), 400, /models/]] },

  'spec: responses.input': { path: responses, ok: [resp(), resp({ input: [{ role: 'user', content: 'x' }] })], refused: [[resp({ input: 42 }), 400, /input/]] },
  'spec: responses.max-tool-calls': {
    path: responses,
    ok: [resp({ max_tool_calls: 30 }), resp({ max_tool_calls: 99, stop_server_tools_when: [{ type: 'step_count_is', step_count: 2 }] })],
    refused: [[resp({ max_tool_calls: 31 }), 400, /max_tool_calls/]],
  },
  'spec: responses.stop-conditions': { path: responses, ok: [resp({ stop_server_tools_when: [{ type: 'max_cost', max_cost_in_dollars: 1 }] })], refused: [[resp({ stop_server_tools_when: [] }), 400, /at least 1/]] },
  'spec: responses.previous-response': { path: responses, ok: [resp({ previous_response_id: null })], refused: [[resp({ previous_response_id: 'resp_1' }), 400, /not supported/]] },
  'spec: responses.include': {
    path: responses,
    ok: [resp({ include: ['file_search_call.results', 'message.input_image.image_url', 'computer_call_output.output.image_url', 'reasoning.encrypted_content', 'code_interpreter_call.outputs'] })],
    refused: [[resp({ include: ['everything'] }), 400, /include/]],
  },
  'spec: responses.metadata': { path: responses, ok: [resp({ metadata: pairs(16) })], refused: [[resp({ metadata: pairs(17) }), 400, /16/], [resp({ metadata: { 'x]': 'v' } }), 400, /brackets/]] },
  'spec: responses.modalities': { path: responses, ok: [resp({ modalities: ['text', 'image'] })], refused: [[resp({ modalities: ['audio'] }), 400, /text, image/]] },
  'spec: responses.service-tier': { path: responses, ok: ['auto', 'default', 'fast', 'flex', 'priority', 'scale', null].map((s) => resp({ service_tier: s })), refused: [[resp({ service_tier: 'ultrafast' }), 400, /service_tier/]] },
  'spec: responses.truncation': { path: responses, ok: [resp({ truncation: 'auto' }), resp({ truncation: 'disabled' }), resp({ truncation: null })], refused: [[resp({ truncation: 'middle' }), 400, /auto, disabled/]] },
  'spec: responses.route': { path: responses, ok: [resp({ route: 'sort' })], refused: [[resp({ route: 'x' }), 400, /fallback, sort/]] },
  'spec: responses.session-and-user': { path: responses, ok: [resp({ session_id: words(256), user: words(256) })], refused: [[resp({ session_id: words(257) }), 400], [resp({ user: words(257) }), 400]] },

  'spec: embeddings.input-model': { path: '/v1/embeddings', ok: [emb(), emb({ input: ['a', 'b'] }), emb({ input: [1, 2, 3] })], refused: [[{ model: 'local/embed' }, 400, /input/], [{ input: 'x' }, 400, /model/]] },
  'spec: embeddings.dimensions': { path: '/v1/embeddings', ok: [emb({ dimensions: 1 }), emb({ dimensions: 10_000 })], refused: [[emb({ dimensions: 0 }), 400, /dimensions/]] },
  'spec: embeddings.encoding': { path: '/v1/embeddings', ok: [emb({ encoding_format: 'float' }), emb({ encoding_format: 'base64' })], refused: [[emb({ encoding_format: 'int8' }), 400, /float, base64/]] },
  'spec: embeddings.user': { path: '/v1/embeddings', ok: [emb({ user: words(257), input_type: 'search_query' })] },

  'spec: speech.required': {
    path: '/v1/audio/speech',
    key: 'management',
    ok: [tts()],
    refused: [[{ model: 'local/tts', voice: 'alloy' }, 400, /input/], [{ model: 'local/tts', input: 'hi' }, 400, /voice/], [tts({ voice: '' }), 400, /voice/], [{ input: 'hi', voice: 'alloy' }, 400, /model/]],
  },
  'spec: speech.format': { path: '/v1/audio/speech', key: 'management', ok: [tts({ response_format: 'mp3' }), tts({ response_format: 'pcm' })], refused: [[tts({ response_format: 'flac' }), 400, /mp3 or pcm/]] },
  'spec: speech.speed': { path: '/v1/audio/speech', key: 'management', ok: [tts({ speed: 4 }), tts({ speed: 0.25 }), tts({ model: 'local/tts-basic', speed: 1 })], refused: [[tts({ model: 'local/tts-basic', speed: 1.5 }), 400, /speed/], [tts({ speed: 0.0001 }), 400, /between 0.25 and 4/]] },
  'spec: speech.session-and-user': { path: '/v1/audio/speech', key: 'management', ok: [tts({ session_id: words(256), user: words(256) })], refused: [[tts({ session_id: words(257) }), 400], [tts({ user: words(257) }), 400]] },
  'spec: speech.references': {
    path: '/v1/audio/speech',
    key: 'management',
    ok: [tts({ input_references: [] }), tts({ input_references: [clip, clip, clip] }), tts({ input_references: [{ type: 'text', text: 'before' }, clip] }), tts({ input_references: [clip, { type: 'text', text: 'a' }, clip, { type: 'text', text: 'b' }] }), tts({ input_references: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] })],
    refused: [
      [tts({ input_references: [clip, clip, clip, clip] }), 400, /1 to 3/],
      [tts({ input_references: [{ type: 'text', text: 'a' }, clip, clip] }), 400, /right after its clip/],
      [tts({ input_references: [clip, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] }), 400, /mix/],
      [tts({ input_references: [{ type: 'image_url', image_url: { url: 'a' } }, { type: 'image_url', image_url: { url: 'b' } }] }), 400, /exactly one/],
    ],
  },
  'spec: speech.multi-speaker': { path: '/v1/audio/speech', key: 'management', ok: [tts({ input: [{ text: 'hi', voice: 'alloy' }, { text: 'there', voice: 'ember', instructions: 'calm' }] })], refused: [[tts({ input: [] }), 400]] },
  'spec: speech.management-key': { path: '/v1/audio/speech', key: 'api', refused: [[tts(), 403, /Only management keys can perform this operation/]] },

  'spec: decisions.questions': {
    path: '/alpha/decisions',
    key: 'management',
    ok: [decide({ questions: { a: { type: 'noul', instructions: 'i', criteria: { true: 'yes', false: 'no' } }, b: { type: 'choice', instructions: 'i', criteria: { x: 'X' } }, c: { type: 'score', instructions: 'i', criteria: ['only'] } } })],
    refused: [[decide({ questions: { a: { type: 'rank', instructions: 'i' } } }), 400, /noul, choice or score/], [decide({ questions: { a: { type: 'score', instructions: 'i', criteria: { a: 'x' } } } }), 400, /ordered array/], [decide({ questions: { a: { type: 'noul' } } }), 400, /instructions/]],
  },
  'spec: decisions.state': { path: '/alpha/decisions', key: 'management', ok: [decide({ state: 'text' }), decide({ state: { a: 1 } }), decide({ state: [1, 2] })], refused: [[decide({ state: undefined }), 400, /state/]] },
  'spec: decisions.session-id': { path: '/alpha/decisions', key: 'management', ok: [decide({ session_id: words(256) })], refused: [[decide({ session_id: words(257) }), 400]] },
  'spec: decisions.management-key': { path: '/alpha/decisions', key: 'api', refused: [[decide(), 403, /Only management keys/]] },

  'spec: chat.session-header': { path: chat, headers: { 'x-session-id': words(300) }, ok: [msg({ session_id: 's' })], refused: [[msg(), 400, /256/]] },
  'spec: responses.session-header': { path: responses, headers: { 'x-session-id': words(257) }, ok: [resp({ session_id: 's' })], refused: [[resp(), 400, /256/]] },
  'spec: chat.result': {
    path: chat,
    ok: [msg({ model: 'local/lorem', messages: [{ role: 'user', content: 'write 4 words' }] })],
    answer: (c) => {
      expect(c).toMatchObject({ object: 'chat.completion', id: expect.any(String), model: 'local/lorem', created: expect.any(Number) });
      expect(c.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant', content: expect.any(String), refusal: null }, finish_reason: 'stop', native_finish_reason: expect.anything(), logprobs: null });
      expect(c.usage.total_tokens).toBe(c.usage.prompt_tokens + c.usage.completion_tokens);
      expect(c.usage.cost).toBeGreaterThan(0);
      expect(c.router_metadata).toBeUndefined();
    },
  },
  'spec: chat.router-metadata': {
    path: chat,
    headers: { 'x-router-metadata': 'enabled' },
    ok: [msg()],
    answer: (c) => expect(c.router_metadata).toMatchObject({ attempt: 1, requested: 'local/echo', endpoints: { total: expect.any(Number) }, is_byok: false }),
  },
  'spec: responses.router-metadata': { path: responses, headers: { 'x-router-metadata': 'enabled' }, ok: [resp()], answer: (r) => expect(r.router_metadata.requested).toBe('local/echo') },
  'spec: responses.result': {
    path: responses,
    ok: [resp({ input: 'one two three' })],
    answer: (r) => {
      expect(r).toMatchObject({ object: 'response', status: 'completed', error: null });
      expect(r.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'one two three' }] });
      expect(r.usage).toMatchObject({ input_tokens: expect.any(Number), input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, cost: expect.any(Number) });
      expect(r.usage.total_tokens).toBe(r.usage.input_tokens + r.usage.output_tokens);
    },
  },
  'spec: embeddings.result': {
    path: '/v1/embeddings',
    ok: [emb({ input: ['a', 'b'], dimensions: 3 })],
    answer: (e) => {
      expect(e).toMatchObject({ object: 'list', model: 'local/embed', usage: { prompt_tokens: expect.any(Number), total_tokens: expect.any(Number) } });
      expect(e.data.map((d: any) => [d.object, d.index, d.embedding.length])).toEqual([['embedding', 0, 3], ['embedding', 1, 3]]);
    },
  },
  'spec: speech.content-type': {
    path: '/v1/audio/speech',
    key: 'management',
    ok: [tts({ response_format: 'pcm' })],
    answer: (_, headers) => expect(headers.get('content-type')).toBe('audio/pcm'),
  },
  'spec: decisions.answers': {
    path: '/alpha/decisions',
    key: 'management',
    ok: [decide({ questions: { n: { type: 'noul', instructions: 'i' }, c: { type: 'choice', instructions: 'i', criteria: { a: 'A', b: 'B' } }, s: { type: 'score', instructions: 'i', criteria: ['lo', 'mid', 'hi'] } } })],
    answer: (d) => {
      expect(d).toMatchObject({ id: expect.any(String), model: expect.stringMatching(/^local\//), provider: expect.any(String), usage: { cost: expect.any(Number), input_tokens: expect.any(Number), output_tokens: expect.any(Number) } });
      expect(Object.keys(d.answers).sort()).toEqual(['c', 'n', 's']);
      expect(d.answers.n).toMatchObject({ type: 'noul', noul: expect.any(Number) });
      expect(d.answers.c).toMatchObject({ type: 'choice', confidence: expect.any(Number) });
      expect(['a', 'b']).toContain(d.answers.c.choice);
      expect(Object.keys(d.answers.c.probabilities).sort()).toEqual(['a', 'b']);
      expect(d.answers.s).toMatchObject({ type: 'score', score: expect.any(Number), confidence: expect.any(Number), legend: { 0: 'lo', 1: 'mid', 2: 'hi' } });
      expect(Object.keys(d.answers.s.probabilities).sort()).toEqual(['0', '1', '2']);
    },
  },
  'spec: errors.envelope': {
    path: '/v1/embeddings',
    refused: [[emb(), 429], [emb({ model: 'nobody/nothing' }), 400], [emb({ dimensions: 'x' }), 400]],
    headers: { 'x-router-fault': '429,retry_after=1,times=1' },
  },

  'spec: batch.create.provider': {
    path: '/v1/batches',
    okStatus: 202,
    ok: [{ endpoint: '/v1/embeddings', model: 'local/embed', requests: [{ custom_id: 'a', body: { input: 'x' } }], provider: { only: ['local-alpha'], allow_fallbacks: false } }],
    refused: [[{ endpoint: '/v1/embeddings', model: 'local/embed', requests: [{ custom_id: 'a', body: { input: 'x' } }], provider: { order: ['local-alpha'] } }, 400, /only "only" and "allow_fallbacks"/]],
  },

  'spec: auth.bearer': {
    path: chat,
    key: 'none',
    refused: [[msg(), 401]],
  },
  'spec: auth.invalid-key': { path: '/v1/embeddings', key: 'wrong', refused: [[emb(), 401]] },
  'spec: versioning.legacy-header': { path: chat, headers: { 'x-router-experimental-metadata': 'enabled' }, ok: [msg()] },
};

async function send(c: Case, body: unknown): Promise<{ status: number; json: any; headers: Headers }> {
  const key = c.key ?? 'api';
  const bearer = { api: t.apiKey, management: t.managementKey, wrong: 'sk-rt-v1-wrong', none: '' }[key];
  if (key !== 'none') return post(t, c.path, body, c.headers, bearer);
  const res = await fetch(`${t.apiRoot}${c.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json(), headers: res.headers };
}

describe('request rules of the spec', () => {
  for (const [rule, c] of Object.entries(CASES)) {
    it(rule, async () => {
      for (const body of c.ok ?? []) {
        const r = await send(c, body);
        expect(r.status, `${JSON.stringify(body).slice(0, 160)} -> ${r.status} ${JSON.stringify(r.json ?? '').slice(0, 200)}`).toBe(c.okStatus ?? 200);
        c.answer?.(r.json, r.headers);
      }
      for (const [body, status, message] of c.refused ?? []) {
        const r = await send(c, body);
        expect(r.status, `${JSON.stringify(body).slice(0, 160)} -> ${JSON.stringify(r.json).slice(0, 200)}`).toBe(status);
        expect(r.json.error.code, 'the error envelope').toBe(status);
        if (message) expect(r.json.error.message).toMatch(message);
        const type = r.json.error.metadata?.error_type;
        if (type !== undefined) expect(CANONICAL_ERROR_TYPES).toContain(type);
      }
    });
  }
});

describe('stream rules of the spec', () => {
  it('spec: responses.failed-error', async () => {
    const r = await post(t, responses, resp({ input: 'a b c d e', stream: true }), { 'x-router-fault': 'error-chunk,after=2' });
    const events = r.text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
    const failed = events.find((e) => e.type === 'response.failed');
    expect(failed.response.status).toBe('failed');
    // The canonical cause beside them, as chat's error chunk says it (stream-break-causes.test.ts).
    expect(failed.response.error).toEqual({ code: expect.any(String), message: expect.any(String), error_type: expect.any(String) });
    expect(CANONICAL_ERROR_TYPES).toContain(failed.response.error.error_type);
  });
});
