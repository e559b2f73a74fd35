import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startInProcessEnv } from '../support/inprocess-env.js';
import { startedForAll } from '../support/for-all.js';

// Every value of a type the spec gives is checked (a wrong type is a 400, never read as something
// else); limits hold only where the spec sets one. Over real HTTP against the emulator, in process.
const t = startedForAll(() => startInProcessEnv());

const msg = (extra: object = {}) => ({ model: 'local/echo', messages: [{ role: 'user', content: 'x' }], ...extra });
const resp = (extra: object = {}) => ({ model: 'local/echo', input: 'x', ...extra });
const tts = (extra: object = {}) => ({ model: 'local/tts', input: 'hi', voice: 'alloy', ...extra });
const decide = (questions: object, extra: object = {}) => ({ model: 'local/judge', state: 'x', questions, ...extra });
const clip = { type: 'input_audio', input_audio: { data: 'data:audio/wav;base64,UklGRg==' } };
const text = (words: string) => ({ type: 'text', text: words });

interface Case {
  path: string;
  management?: boolean;
  ok: object[];
  refused: [object, RegExp][];
}

const CASES: Record<string, Case> = {
  'spec: chat.option-types': {
    path: '/v1/chat/completions',
    ok: [
      msg({ stream: false, stream_options: { include_usage: true }, logit_bias: { '42': -1.5, '7': 100 }, parallel_tool_calls: true }),
      msg({ prediction: { type: 'content', content: 'x' }, response_format: { type: 'json_object' }, tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] }),
      msg({ plugins: [{ id: 'web' }], cache_control: { type: 'ephemeral' }, debug: { echo_upstream_body: true }, trace: { trace_id: 't' }, reasoning: { effort: 'low' } }),
    ],
    refused: [
      [msg({ stream: 'yes' }), /stream must be a boolean/],
      [msg({ stream_options: { include_usage: 'yes' } }), /stream_options.include_usage must be a boolean/],
      [msg({ logit_bias: { '42': 'high' } }), /logit_bias\[42\] must be a number/],
      [msg({ logit_bias: { word: 1 } }), /logit_bias keys must be token ids/],
      [msg({ logit_bias: [1] }), /logit_bias must be an object/],
      [msg({ parallel_tool_calls: 'yes' }), /parallel_tool_calls must be a boolean/],
      [msg({ prediction: { type: 'content', content: 5 } }), /prediction/],
      [msg({ response_format: 'json' }), /response_format must be an object/],
      [msg({ tools: [{ type: 'function', function: {} }] }), /tools\[0\].function/],
      [msg({ tools: 'f' }), /tools must be an array/],
      [msg({ messages: [{ role: 'user', content: 'x', name: 5 }] }), /messages\[0\].name must be a string/],
      [msg({ debug: { echo_upstream_body: 'y' } }), /debug.echo_upstream_body must be a boolean/],
      [msg({ cache_control: { type: 'forever' } }), /ephemeral/],
      [msg({ plugins: [{}] }), /plugins\[0\]/],
      [msg({ reasoning: 'high' }), /reasoning must be an object/],
      [msg({ provider: { allow_fallbacks: 'no' } }), /provider.allow_fallbacks must be a boolean/],
    ],
  },
  'spec: chat.stop-conditions': {
    path: '/v1/chat/completions',
    ok: [msg({ stop_server_tools_when: [{ type: 'step_count_is', step_count: 3 }, { type: 'max_cost', max_cost_in_dollars: 0.5 }] })],
    refused: [
      [msg({ stop_server_tools_when: [{ type: 'step_count_is', step_count: 'many' }] }), /step_count_is needs an integer step_count/],
      [msg({ stop_server_tools_when: [{ type: 'max_cost' }] }), /max_cost needs a number max_cost_in_dollars/],
    ],
  },
  'spec: responses.option-types': {
    path: '/v1/responses',
    ok: [
      resp({ stream: false, text: { format: { type: 'text' }, verbosity: 'low' }, prompt: { id: 'p', variables: {} }, tools: [{ type: 'function', name: 'f', parameters: {} }] }),
      resp({ input: [{ role: 'user', content: 'hi' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'yes' }] }, { type: 'function_call_output', call_id: 'c', output: '1' }] }),
    ],
    refused: [
      [resp({ input: [{ content: 'hi' }] }), /input\[0\].role must be a string/],
      [resp({ input: [{ role: 'user', content: 5 }] }), /input\[0\].content must be a string or an array/],
      [resp({ stream: 'yes' }), /stream must be a boolean/],
      [resp({ text: { format: 'json' } }), /text.format/],
      [resp({ prompt: { variables: {} } }), /prompt/],
      [resp({ tools: [{ type: 'function' }] }), /tools\[0\]/],
      [resp({ reasoning: true }), /reasoning must be an object/],
    ],
  },
  'spec: responses.stop-conditions': {
    path: '/v1/responses',
    ok: [resp({ stop_server_tools_when: [{ type: 'max_cost', max_cost_in_dollars: 1 }] })],
    refused: [
      [resp({ stop_server_tools_when: [{ type: 'step_count_is', step_count: 1.5 }] }), /integer step_count/],
      [resp({ stop_server_tools_when: [{ type: 'max_cost', max_cost_in_dollars: '1' }] }), /number max_cost_in_dollars/],
    ],
  },
  'spec: decisions.questions': {
    path: '/alpha/decisions',
    management: true,
    ok: [decide({ a: { type: 'noul', instructions: 'i', criteria: { true: 'yes', false: 'no' } }, b: { type: 'choice', instructions: 'i', criteria: { x: 'X', y: '' } }, c: { type: 'score', instructions: '', criteria: ['low', 'high'] } })],
    refused: [
      [decide({ a: { type: 'noul', instructions: 5 } }), /questions.a.instructions must be a string/],
      [decide({ a: { type: 'noul', instructions: { text: 'i' } } }), /instructions must be a string/],
      [decide({ a: { type: 'noul', instructions: 'i', criteria: { true: 1, false: 'no' } } }), /criteria.true must be a description string/],
      [decide({ a: { type: 'choice', instructions: 'i', criteria: { x: null } } }), /criteria.x must be a description string/],
      [decide({ a: { type: 'choice', instructions: 'i', criteria: { x: { text: 'X' } } } }), /criteria.x must be a description string/],
      [decide({ a: { type: 'score', instructions: 'i', criteria: ['low', 2] } }), /criteria\[1\] must be a description string/],
      [decide({ a: { type: 'noul', instructions: 'i' } }, { trace: ['t'] }), /trace must be an object/],
    ],
  },
  'spec: speech.required': {
    path: '/v1/audio/speech',
    management: true,
    ok: [tts({ input: [{ text: 'hi', voice: 'ember' }, { text: 'there' }] })],
    refused: [
      [{ model: 'local/tts', input: [{ text: 'hi', voice: 'alloy' }] }, /voice is required/],
      [tts({ input: [{ text: 'hi', voice: 'alloy', instructions: 5 }] }), /input\[0\].instructions must be a string/],
      [tts({ trace: 't' }), /trace must be an object/],
      [tts({ provider: { zdr: 'yes' } }), /provider.zdr must be a boolean/],
    ],
  },
  'spec: speech.references': {
    path: '/v1/audio/speech',
    management: true,
    ok: [tts({ input_references: [text('before'), clip] }), tts({ input_references: [clip, text('after')] }), tts({ input_references: [clip, text('a'), clip, text('b')] })],
    refused: [
      [tts({ input_references: [text('t0'), clip, text('t1')] }), /a single clip takes one transcript/],
      [tts({ input_references: [clip, text('a'), text('b'), clip] }), /right after its clip/],
    ],
  },
  'spec: chat.max-tokens': {
    path: '/v1/chat/completions',
    ok: [msg({ max_tokens: 1 }), msg({ max_completion_tokens: 16, max_tokens: null })],
    // The spec gives an integer and no range: a cap below 1 is the model's to refuse, named in the message.
    refused: [[msg({ max_tokens: 0 }), /max_tokens \(0\): local\/echo answers at least 1 token/], [msg({ max_completion_tokens: 1.5 }), /must be an integer/]],
  },
  'spec: responses.max-tool-calls': {
    path: '/v1/responses',
    ok: [resp({ max_tool_calls: 0 }), resp({ max_tool_calls: -1 }), resp({ max_output_tokens: null })],
    refused: [[resp({ max_tool_calls: 31 }), /max_tool_calls must be at most 30/], [resp({ max_output_tokens: -5 }), /local\/echo answers at least 1 token/]],
  },
  'spec: responses.session-and-user': {
    path: '/v1/responses',
    ok: [resp({ safety_identifier: 'h'.repeat(1000), user: 'u'.repeat(256) })],
    refused: [[resp({ user: 'u'.repeat(257) }), /user must be at most 256/]],
  },
  'spec: decisions.session-id': {
    path: '/alpha/decisions',
    management: true,
    ok: [decide({ q: { type: 'noul', instructions: 'i' } }, { user: 'u'.repeat(1000), session_id: 's'.repeat(256) })],
    refused: [[decide({ q: { type: 'noul', instructions: 'i' } }, { session_id: 's'.repeat(257) }), /session_id must be at most 256/]],
  },
};

describe('the emulator checks each value the spec types, and only the limits it sets', () => {
  for (const [name, c] of Object.entries(CASES)) {
    it(name, async () => {
      const key = c.management ? t.managementKey : t.apiKey;
      for (const body of c.ok) expect((await t.call('POST', c.path, body, key)).status, JSON.stringify(body)).toBe(200);
      for (const [body, why] of c.refused) {
        const r = await t.call('POST', c.path, body, key);
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.json.error.message).toMatch(why);
      }
    });
  }
});

describe('the CLI agrees, before sending', () => {
  const sent = () => t.emu.requestLog.length;

  it('a single --reference-audio clip takes one --reference-text, before or after it', async () => {
    // spec: speech.references
    const wav = join(t.dir, 'me.wav');
    writeFileSync(wav, Buffer.from('RIFF....WAVEfmt '));
    const out = join(t.dir, 'out.mp3');
    const before = sent();
    const both = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '--reference-text', 't0', '--reference-audio', wav, '--reference-text', 't1', '-o', out]);
    expect(both).toMatchObject({ code: 2, stderr: 'error: a single --reference-audio clip takes one --reference-text, before or after it\n' });
    expect(sent()).toBe(before);
    for (const order of [['--reference-text', 't0', '--reference-audio', wav], ['--reference-audio', wav, '--reference-text', 't1']]) {
      expect((await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', ...order, '-o', out])).code).toBe(0);
    }
  });

  it('--turns: a turn\'s voice is a non-empty string and its instructions a string', async () => {
    // spec: speech.multi-speaker
    const turns = join(t.dir, 'turns.json');
    const before = sent();
    for (const bad of [[{ text: 'hi', voice: 5 }], [{ text: 'hi', voice: '' }], [{ text: 'hi', instructions: ['calm'] }]]) {
      writeFileSync(turns, JSON.stringify(bad));
      const r = await t.run(['speak', '--turns', turns, '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 't.mp3')]);
      expect(r.code, JSON.stringify(bad)).toBe(2);
      expect(r.stderr).toMatch(/^error: --turns must hold/);
    }
    expect(sent()).toBe(before);
  });

  it('decide --questions: instructions and criteria that are neither text nor JSON are refused before sending', async () => {
    // spec: decisions.questions (the deployed service also takes a JSON object or array: deployed-notes.test.ts)
    const file = join(t.dir, 'questions.json');
    const before = sent();
    for (const [q, why] of [[{ type: 'noul', instructions: 5 }, /instructions must be a string, a JSON object or an array/], [{ type: 'choice', instructions: 'i', criteria: { a: 7 } }, /criteria must be a string, a JSON object or an array/], [{ type: 'score', instructions: 'i', criteria: ['low', null] }, /criteria must be a string, a JSON object or an array/]] as const) {
      writeFileSync(file, JSON.stringify({ q }));
      const r = await t.run(['decide', '--model', 'local/judge', '--state-text', 'x', '--questions', file]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(why);
    }
    expect(sent()).toBe(before);
  });

  it('chat --logit-bias takes a token id and a number, as the spec types the map', async () => {
    // spec: chat.option-types
    const before = sent();
    const word = await t.run(['chat', '--model', 'local/echo', '--logit-bias', 'hello=5', 'x']);
    expect(word).toMatchObject({ code: 2, stderr: 'error: --logit-bias hello=5: "hello" is not a token id (a whole number)\n' });
    expect(sent()).toBe(before);
    expect((await t.run(['chat', '--model', 'local/echo', '--logit-bias', '42=-1.5', 'x'])).code).toBe(0);
    expect(t.emu.requestLog.at(-1)!.body).toMatchObject({ logit_bias: { '42': -1.5 } });
  });

  it('responses --input items and --tools are checked before sending: message items have a role and content, tools a type', async () => {
    // spec: responses.option-types
    const file = join(t.dir, 'tools.json');
    const before = sent();
    const input = join(t.dir, 'input.json');
    for (const [items, why] of [[[{ content: 'hi' }], /item 1 is a message without a string "role"/], [[{ role: 'user', content: 'hi' }, { role: 'user' }], /item 2 needs "content"/], [['hi'], /item 1 is not an object/]] as const) {
      writeFileSync(input, JSON.stringify(items));
      const r = await t.run(['responses', '--model', 'local/echo', '--no-stream', '--input', input]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(why);
    }
    for (const [tools, why] of [[[{ name: 'f' }], /tool 1 needs a string "type"/], [[{ type: 'function', name: 'f' }, { type: 'function' }], /tool 2 must be \{"type": "function", "function": \{"name"/]] as const) {
      writeFileSync(file, JSON.stringify(tools));
      const r = await t.run(['responses', '--model', 'local/echo', '--no-stream', '--tools', file, 'x']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(why);
    }
    expect(sent()).toBe(before);
  });

  it('decide --user has no length limit (the spec sets none for decisions)', async () => {
    // spec: decisions.session-id
    const r = await t.run(['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'q', 'yes?', '--user', 'u'.repeat(300), '--json']);
    expect(r.code).toBe(0);
    expect(t.emu.requestLog.at(-1)!.body).toMatchObject({ user: 'u'.repeat(300) });
  });
});
