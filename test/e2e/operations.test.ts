import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { post, startTestEnv, type TestEnv } from '../helpers.js';

let t: TestEnv;
let mgmt: Record<string, string>;
beforeAll(async () => {
  t = await startTestEnv();
  mgmt = { ROUTER_MANAGEMENT_KEY: t.managementKey };
});
afterAll(() => t.close());
beforeEach(() => t.clearRequests());
const sent = (path: string) => t.requests().filter((r) => r.path === path);

/** sox that can decode MP3 (the capability the checks need: Debian's libsox-fmt-mp3), not just sox. */
function hasSox(): boolean {
  try {
    return /\bmp3\b/i.test(execFileSync('sox', ['-h'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  } catch {
    return false;
  }
}

describe('router responses', () => {
  it('streams output_text deltas by default', async () => {
    const r = await t.run(['responses', '--model', 'local/echo', 'stream me please']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('stream me please\n');
    expect(sent('/v1/responses')[0]!.body.stream).toBe(true);
  });

  it('--json prints the response object with usage and the echoed settings', async () => {
    // spec: responses.echo
    const r = await t.run(['responses', '--model', 'local/lorem', '--json', '--max-output-tokens', '4', '--temperature', '0.3', '--metadata', 'a=b', '--instructions', 'be short', 'write 20 words']);
    const res = JSON.parse(r.stdout);
    expect(res).toMatchObject({ object: 'response', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, temperature: 0.3, metadata: { a: 'b' }, instructions: 'be short' });
    expect(res.output[0]).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text' }] });
    expect(res.usage.output_tokens).toBe(4);
    expect(res.usage.total_tokens).toBe(res.usage.input_tokens + 4);
  });

  it('--stream --json prints typed events as JSONL ending in response.completed', async () => {
    // spec: responses.stream
    const r = await t.run(['responses', '--model', 'local/echo', '--stream', '--json', 'a b']);
    const types = r.stdout.trim().split('\n').map((l) => JSON.parse(l).type);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types.filter((x) => x === 'response.output_text.delta')).toHaveLength(2);
  });

  it('takes input items from a file and sends the named options', async () => {
    const f = join(t.dir, 'history.json');
    writeFileSync(f, JSON.stringify([{ role: 'user', content: 'first' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'second' }]));
    const tools = join(t.dir, 'tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', name: 'f', description: 'd', parameters: { type: 'object' } }]));
    const r = await t.run(['responses', '--input', f, '--model', 'local/echo', '--no-stream', '--tools', tools, '--tool-choice', 'auto', '--reasoning-effort', 'low', '--reasoning-summary', 'auto', '--text-format', 'text', '--verbosity', 'low', '--service-tier', 'flex', '--max-tool-calls', '5', '--stop-when', 'step_count=3', '--stop-when', 'max_cost=0.5', '--session', 's1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('second\n');
    expect(sent('/v1/responses')[0]!.body).toMatchObject({
      input: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'second' }],
      tools: [{ type: 'function', name: 'f' }], tool_choice: 'auto', reasoning: { effort: 'low', summary: 'auto' }, text: { format: { type: 'text' }, verbosity: 'low' },
      service_tier: 'flex', max_tool_calls: 5, stop_server_tools_when: [{ type: 'step_count_is', step_count: 3 }, { type: 'max_cost', max_cost_in_dollars: 0.5 }], session_id: 's1',
    });
  });

  it('refuses bad input before sending', async () => {
    for (const [args, msg] of [
      [['--previous-response-id', 'resp_1', 'x'], /not supported: each request is independent/],
      [['--max-tool-calls', '31', 'x'], /between 0 and 30/],
      [['--stop-when', 'steps=2', 'x'], /step_count=N or max_cost=USD/],
      [['--input', join(t.dir, 'nope.json')], /cannot read/],
      [['--tool-choice', 'maybe', 'x'], /allowed choices/],
    ] as [string[], RegExp][]) {
      const r = await t.run(['responses', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
    expect(t.requests()).toHaveLength(0);
  });

  it('the service refuses a previous-response reference with 400', async () => {
    const r = await post(t, '/v1/responses', { input: 'x', previous_response_id: 'resp_1' });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/full history in input/);
  });
});

describe('router embed', () => {
  it('embeds arguments: deterministic unit vectors of the asked dimension', async () => {
    const a = JSON.parse((await t.run(['embed', 'alpha', 'beta', '--model', 'local/embed', '--dimensions', '16'])).stdout);
    const b = JSON.parse((await t.run(['embed', 'alpha', '--model', 'local/embed', '--dimensions', '16'])).stdout);
    expect(a.data).toHaveLength(2);
    expect(a.data[0].embedding).toHaveLength(16);
    expect(a.data[0].embedding).toEqual(b.data[0].embedding);
    expect(a.data[1].embedding).not.toEqual(a.data[0].embedding);
    const norm = Math.sqrt(a.data[0].embedding.reduce((s: number, x: number) => s + x * x, 0));
    expect(norm).toBeCloseTo(1, 6);
    expect(a.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('reads --file (text and JSONL lines), decodes base64 unless --raw, prints --jsonl', async () => {
    const f = join(t.dir, 'inputs.txt');
    writeFileSync(f, 'plain line\n"json string"\n{"input":"object input"}\n\n');
    const r = await t.run(['embed', '--file', f, '--model', 'local/embed', '--dimensions', '4', '--encoding-format', 'base64', '--jsonl']);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.input)).toEqual(['plain line', 'json string', 'object input']);
    expect(lines[0].embedding).toHaveLength(4);
    expect(sent('/v1/embeddings')[0]!.body.encoding_format).toBe('base64');
    const plain = JSON.parse((await t.run(['embed', 'plain line', '--model', 'local/embed', '--dimensions', '4'])).stdout);
    for (let i = 0; i < 4; i++) expect(lines[0].embedding[i]).toBeCloseTo(plain.data[0].embedding[i], 6);
    const raw = JSON.parse((await t.run(['embed', 'x', '--model', 'local/embed', '--encoding-format', 'base64', '--raw'])).stdout);
    expect(typeof raw.data[0].embedding).toBe('string');
  });

  it('more inputs than one request takes go as several requests, answered as one: same vectors, indexes over all, usage summed', async () => {
    const texts = ['one', 'two', 'three', 'four', 'five'];
    const single = JSON.parse((await t.run(['embed', ...texts, '--model', 'local/embed', '--dimensions', '4'])).stdout);
    t.clearRequests();
    const split = await t.run(['embed', ...texts, '--model', 'local/embed', '--dimensions', '4', '--per-request', '2', '--usage']);
    expect(split.code, split.stderr).toBe(0);
    expect(sent('/v1/embeddings').map((q) => q.body.input)).toEqual([['one', 'two'], ['three', 'four'], ['five']]);
    const joined = JSON.parse(split.stdout);
    expect(joined.data.map((d: { index: number }) => d.index)).toEqual([0, 1, 2, 3, 4]);
    expect(joined.data.map((d: { embedding: number[] }) => d.embedding)).toEqual(single.data.map((d: { embedding: number[] }) => d.embedding));
    expect(joined.usage.prompt_tokens).toBe(single.usage.prompt_tokens);
    expect(joined.usage.cost).toBeCloseTo(single.usage.cost, 12);
    expect(split.stderr).toMatch(new RegExp(`^usage: ${single.usage.prompt_tokens} input tokens`));
    // A file longer than the service takes in one request (2048 inputs) just works.
    const f = join(t.dir, 'many.txt');
    writeFileSync(f, Array.from({ length: 2050 }, (_, i) => `line ${i}`).join('\n'));
    t.clearRequests();
    const many = await t.run(['embed', '--file', f, '--model', 'local/embed', '--dimensions', '2', '--jsonl']);
    expect(many.code, many.stderr).toBe(0);
    const lines = many.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.index)).toEqual(Array.from({ length: 2050 }, (_, i) => i));
    expect(lines[2049].input).toBe('line 2049');
    expect(sent('/v1/embeddings').map((q) => q.body.input.length)).toEqual([2048, 2]);
  });

  it('refuses bad input before sending', async () => {
    t.clearRequests();
    for (const args of [['x', '--dimensions', '0', '--model', 'local/embed'], ['x'], ['x', '--model', 'local/embed', '--raw'], ['--file', join(t.dir, 'missing.txt'), '--model', 'local/embed']]) {
      const r = await t.run(['embed', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(t.requests()).toHaveLength(0);
  });
});

describe('router speak', () => {
  it('streams real MP3 to stdout; longer text gives longer audio', async () => {
    // spec: speech.content-type
    const short = await t.run(['speak', 'Hello there.', '--voice', 'alloy', '--model', 'local/tts'], { env: mgmt });
    expect(short.code).toBe(0);
    expect(short.stderr).toBe('');
    // An MPEG audio frame starts with 11 set sync bits.
    expect(short.stdoutBytes[0]).toBe(0xff);
    expect(short.stdoutBytes[1]! & 0xe0).toBe(0xe0);
    const long = await t.run(['speak', 'Hello there, this is a much longer sentence with many more words to say.', '--voice', 'alloy', '--model', 'local/tts'], { env: mgmt });
    expect(long.stdoutBytes.length).toBeGreaterThan(short.stdoutBytes.length * 2);
    if (hasSox()) {
      writeFileSync(join(t.dir, 'short.mp3'), short.stdoutBytes);
      writeFileSync(join(t.dir, 'long.mp3'), long.stdoutBytes);
      const info = (f: string, flag: string) => execFileSync('sox', ['--i', flag, join(t.dir, f)]).toString().trim();
      expect(info('short.mp3', '-r')).toBe('24000');
      const d1 = Number(info('short.mp3', '-D'));
      const d2 = Number(info('long.mp3', '-D'));
      expect(d1).toBeGreaterThan(0.3);
      expect(d2).toBeGreaterThan(d1 * 2);
    } else {
      console.warn('sox with MP3 decoding is not installed: the MP3 decoder check was skipped (npm test installs it where it can)');
    }
  });

  it('writes PCM (16-bit LE, 24 kHz) to -o atomically; speed shortens it', async () => {
    const out = join(t.dir, 'voice.pcm');
    const r = await t.run(['speak', 'one two three four', '--voice', 'sage', '--model', 'local/tts', '-o', out, '--json'], { env: mgmt });
    expect(r.code).toBe(0);
    const meta = JSON.parse(r.stdout);
    expect(meta).toMatchObject({ file: out, content_type: 'audio/pcm' });
    const pcm = readFileSync(out);
    expect(pcm.length).toBe(meta.bytes);
    expect(pcm.length % 2).toBe(0);
    const samples = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
    expect(Math.max(...samples)).toBeGreaterThan(1000);
    const fast = await t.run(['speak', 'one two three four', '--voice', 'sage', '--model', 'local/tts', '--format', 'pcm', '--speed', '2'], { env: mgmt });
    expect(fast.stdoutBytes.length).toBeLessThan(pcm.length * 0.6);
    if (hasSox()) {
      const stat = execFileSync('sox', ['-t', 'raw', '-r', '24000', '-e', 'signed', '-b', '16', '-c', '1', out, '-n', 'stat'], { stdio: ['ignore', 'ignore', 'pipe'] });
      void stat;
      const len = execFileSync('sh', ['-c', `sox -t raw -r 24000 -e signed -b 16 -c 1 ${out} -n stat 2>&1 | grep Length`]).toString();
      expect(Number(len.split(':')[1])).toBeCloseTo(pcm.length / 2 / 24000, 2);
    }
    expect(readdirSync(t.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('multi-speaker turns and reference audio go out in the spec\'s shape', async () => {
    const turns = join(t.dir, 'turns.json');
    writeFileSync(turns, JSON.stringify([{ text: 'hi', voice: 'alloy' }, { text: 'hello', voice: 'ember' }]));
    const clip = join(t.dir, 'me.wav');
    writeFileSync(clip, Buffer.from('RIFFfakewav'));
    const r = await t.run(['speak', '--turns', turns, '--voice', 'alloy', '--model', 'local/tts', '--format', 'pcm', '--reference-audio', clip, '--reference-text', 'my words', '--reference-audio', clip], { env: mgmt });
    expect(r.code).toBe(0);
    const body = sent('/v1/audio/speech')[0]!.body;
    expect(body.input).toEqual([{ text: 'hi', voice: 'alloy' }, { text: 'hello', voice: 'ember' }]);
    expect(body.input_references.map((p: any) => p.type)).toEqual(['input_audio', 'text', 'input_audio']);
    expect(body.input_references[0].input_audio.data).toMatch(/^data:audio\/wav;base64,/);
  });

  it('refuses a terminal-less mistake list before sending: bad speed, mixed references, 4 clips, no voice', async () => {
    // spec: speech.speed, speech.references, speech.required
    const clip = join(t.dir, 'me.wav');
    const img = join(t.dir, 'me.png');
    writeFileSync(img, 'png');
    t.clearRequests();
    for (const [args, msg] of [
      [['x', '--voice', 'alloy', '--model', 'local/tts', '--speed', 'fast'], /not a number/],
      [['x', '--voice', 'alloy', '--model', 'local/tts', '--reference-audio', clip, '--reference-image', img], /cannot be mixed/],
      [['x', '--voice', 'alloy', '--model', 'local/tts', ...Array(4).fill(['--reference-audio', clip]).flat()], /1 to 3 times/],
      [['x', '--model', 'local/tts'], /^error: no voice: give --voice/],
      [['x', '--voice', 'alloy'], /no model/],
    ] as [string[], RegExp][]) {
      const r = await t.run(['speak', ...args], { env: mgmt });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
    expect(t.requests()).toHaveLength(0);
  });

  it('server rules: non-default speed without speed control 400; a standard key 403 (exit 3)', async () => {
    const r = await t.run(['speak', 'x', '--voice', 'alloy', '--model', 'local/tts-basic', '--speed', '1.5'], { env: mgmt });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no speed control/);
    const std = await t.run(['speak', 'x', '--voice', 'alloy', '--model', 'local/tts']);
    expect(std.code).toBe(3);
    expect(std.stderr).toMatch(/Only management keys/);
  });

  it('a stream cut mid-way leaves no file behind and exits 8', async () => {
    const out = join(t.dir, 'cut.mp3');
    await t.admin('faults', { faults: ['cut,after=2,times=1,path=/audio'] });
    const r = await t.run(['speak', 'a long enough sentence to be cut in the middle of it', '--voice', 'alloy', '--model', 'local/tts', '-o', out], { env: mgmt });
    expect(r.code).toBe(8);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(t.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('router decide', () => {
  it('builds questions from flags and prints the answers', async () => {
    const r = await t.run(['decide', '--state-text', 'The soup was cold', '--model', 'local/judge', '--noul', 'spam', 'Is this spam?', '--true', 'spam', '--false', 'not spam', '--choice', 'topic', 'Topic?', '--option', 'food=about food', '--option', 'tech=about tech', '--score', 'mood', 'How positive?', '--level', 'bad', '--level', 'ok', '--level', 'good', '--json'], { env: mgmt });
    expect(r.code).toBe(0);
    const res = JSON.parse(r.stdout);
    expect(sent('/alpha/decisions')[0]!.body.questions).toEqual({
      spam: { type: 'noul', instructions: 'Is this spam?', criteria: { true: 'spam', false: 'not spam' } },
      topic: { type: 'choice', instructions: 'Topic?', criteria: { food: 'about food', tech: 'about tech' } },
      mood: { type: 'score', instructions: 'How positive?', criteria: ['bad', 'ok', 'good'] },
    });
    const { spam, topic, mood } = res.answers;
    expect(spam.noul).toBeGreaterThanOrEqual(0);
    expect(spam.noul).toBeLessThanOrEqual(1);
    expect(['food', 'tech']).toContain(topic.choice);
    expect(topic.probabilities.food + topic.probabilities.tech).toBeCloseTo(1, 10);
    const p = Object.values(mood.probabilities) as number[];
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
    expect(mood.score).toBeCloseTo(p.reduce((s, pi, i) => s + pi * i, 0), 6);
    expect(mood.legend).toEqual({ 0: 'bad', 1: 'ok', 2: 'good' });
    const k = p.length;
    expect(mood.confidence).toBeCloseTo(Math.min(1, Math.max(0, (Math.max(...p) - 1 / k) / (1 - 1 / k))), 6);
    expect(res.usage.cost).toBeGreaterThan(0);
    const again = JSON.parse((await t.run(['decide', '--state-text', 'The soup was cold', '--model', 'local/judge', '--noul', 'spam', 'Is this spam?', '--true', 'spam', '--false', 'not spam', '--json'], { env: mgmt })).stdout);
    expect(again.answers.spam).toEqual(spam);
  });

  it('reads state from a file and questions from --questions; prints a TSV table off a TTY', async () => {
    const state = join(t.dir, 'ticket.json');
    writeFileSync(state, JSON.stringify({ subject: 'refund', body: 'please' }));
    const qs = join(t.dir, 'q.json');
    writeFileSync(qs, JSON.stringify({ urgent: { type: 'noul', instructions: 'Urgent?' } }));
    const r = await t.run(['decide', '--state', state, '--questions', qs, '--model', 'local/judge'], { env: mgmt });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^urgent\tnoul\tP\(yes\) \d\.\d\d\t\t\n$/);
    expect(sent('/alpha/decisions')[0]!.body.state).toEqual({ subject: 'refund', body: 'please' });
  });

  it('refuses malformed questions before sending, and the service checks shapes too', async () => {
    // spec: decisions.questions
    t.clearRequests();
    for (const [args, msg] of [
      [['--choice', 'c', 'pick'], /give its options with --option/],
      [['--score', 's', 'rate'], /give its levels with --level/],
      [['--noul', 'n', 'yes?', '--true', 'y'], /both --true and --false/],
      [['--level', 'x'], /must follow a --score question/],
      [[], /no questions/],
    ] as [string[], RegExp][]) {
      const r = await t.run(['decide', '--state-text', 's', '--model', 'local/judge', ...args], { env: mgmt });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
    expect(t.requests()).toHaveLength(0);
    const r = await post(t, '/alpha/decisions', { model: 'local/judge', state: 'x', questions: { q: { type: 'score', instructions: 'i', criteria: [] } } }, {}, t.managementKey);
    expect(r.status).toBe(400);
    const std = await post(t, '/alpha/decisions', { model: 'local/judge', state: 'x', questions: { q: { type: 'noul', instructions: 'i' } } });
    expect(std.status).toBe(403);
  });
});
