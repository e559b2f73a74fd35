import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { addTimeoutHint } from '../../src/cli/context.js';
import { describe, expect, it } from 'vitest';
import { tempFolder } from '../support/temp-folder.js';
import { backoffDelay, parseRetryAfter } from '../../src/client/core.js';
import { APIError, ConnectionError, ProtocolError, StreamError, TimeoutError } from '../../src/client/errors.js';
import { buildChatRequest } from '../../src/cli/commands/chat/request.js';
import { questionsFromArgv } from '../../src/cli/commands/decide.js';
import { scanRequests } from '../../src/batch/scan.js';
import { reportError } from '../../src/cli/errors.js';
import { CliError, EXIT } from '../../src/cli/exit-codes.js';
import { IO } from '../../src/cli/io/io.js';
import { sleep } from '../../src/internal/sleep.js';
import { testStreams } from '../support/inprocess.js';

describe('Retry-After and backoff', () => {
  it('reads seconds and HTTP dates; backoff doubles with jitter and is capped', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('0.5')).toBe(500);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
    fc.assert(
      fc.property(fc.nat(20), fc.double({ min: 0, max: 1, noNaN: true }), (attempt, r) => {
        const d = backoffDelay(attempt, undefined, () => r);
        const ceiling = Math.min(8000, 500 * 2 ** attempt);
        return d >= ceiling / 2 && d <= ceiling;
      }),
    );
    expect(backoffDelay(0, 2500)).toBe(2500);
  });
});

describe('reportError: one line and the code from the table', () => {
  const cases: [unknown, number, RegExp][] = [
    [new CliError('bad flag'), EXIT.USAGE, /^error: bad flag\n$/],
    [new APIError(401, 'Invalid key'), EXIT.AUTH, /check the API key/],
    [new APIError(403, 'Only management keys can perform this operation'), EXIT.AUTH, /ROUTER_MANAGEMENT_KEY/],
    [new APIError(402, 'Insufficient credits'), EXIT.PAYMENT, /Insufficient credits/],
    [new APIError(410, 'gone'), EXIT.NOT_FOUND, /gone/],
    [new APIError(429, 'slow down'), EXIT.RATE_LIMITED, /slow down/],
    [new StreamError(502, 'provider broke'), EXIT.SERVER, /provider broke/],
    [new APIError(422, 'unprocessable'), EXIT.USAGE, /unprocessable/],
    [new ConnectionError('connection refused: x'), EXIT.NETWORK, /connection refused/],
    [new TimeoutError('timed out'), EXIT.NETWORK, /timed out/],
    [new ProtocolError('bad json'), EXIT.SERVER, /bad json/],
    [Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write', path: 'stdout' }), EXIT.FAILURE, /cannot write stdout: disk full/],
    [Object.assign(new Error('EISDIR'), { code: 'EISDIR', syscall: 'open', path: '/tmp' }), EXIT.USAGE, /is a folder/],
    [Object.assign(new Error('listen'), { code: 'EADDRINUSE', port: 8080 }), EXIT.FAILURE, /port 8080 is in use/],
    [Object.assign(new Error('interrupted'), { name: 'AbortError' }), EXIT.INTERRUPTED, /interrupted/],
    [new Error('something\nwith a second line'), EXIT.FAILURE, /^error: something\n$/],
    [new TypeError("Cannot read properties of undefined (reading '0')"), EXIT.FAILURE, /^error: internal error: Cannot read properties of undefined \(reading '0'\) \(a bug of router; --verbose shows where\)\n$/],
  ];
  for (const [err, code, text] of cases) {
    it(`${(err as Error).name}: ${(err as Error).message.split('\n')[0]}`, () => {
      const t = testStreams();
      expect(reportError(err, new IO({}, t.streams))).toBe(code);
      expect(t.stderr()).toMatch(text);
      expect(t.stderr().trim().split('\n')).toHaveLength(1);
    });
  }
});

describe('request builders', () => {
  it('buildChatRequest puts every flag under its wire name', () => {
    const req = buildChatRequest([{ role: 'user', content: 'hi' }], { maxTokens: 5, topP: 0.5, stop: ['x'], logitBias: { '42': '-1' }, reasoningEffort: 'low', session: 's', providerOnly: ['a'], fallbacks: false }, 'a/b');
    expect(req).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      model: 'a/b',
      max_completion_tokens: 5,
      top_p: 0.5,
      stop: ['x'],
      logit_bias: { '42': -1 },
      reasoning: { effort: 'low' },
      session_id: 's',
      provider: { only: ['a'], allow_fallbacks: false },
    });
  });

  it('questionsFromArgv keeps each detail flag with the question before it', () => {
    const q = questionsFromArgv(['--model', 'x/y', '--score', 'mood', 'How?', '--level', 'bad', '--level', 'good', '--noul', 'spam', 'Spam?']);
    expect(q).toEqual({
      mood: { type: 'score', instructions: 'How?', criteria: ['bad', 'good'] },
      spam: expect.objectContaining({ type: 'noul', instructions: 'Spam?' }),
    });
  });
});

describe('scanRequests', () => {
  const folder = tempFolder('router-scan-');
  const file = (name: string, content: string | Buffer) => {
    const p = join(folder(), name);
    writeFileSync(p, content);
    return p;
  };
  const line = (id: string) => JSON.stringify({ custom_id: id, body: { model: 'a/b', messages: [] } });

  it('counts the body it will send, wrapper included, and refuses it over the limit before sending', async () => {
    const p = file('ok.jsonl', [line('a'), line('b')].join('\n'));
    const scan = await scanRequests(p, 'ok.jsonl', {});
    const body = JSON.stringify({ endpoint: scan.endpoint, model: 'a/b', completion_window: '24h', requests: [JSON.parse(line('a')), JSON.parse(line('b'))] });
    expect(scan.bytes).toBeGreaterThanOrEqual(body.length);
    await expect(scanRequests(p, 'ok.jsonl', { maxBytes: body.length - 10 })).rejects.toThrow(/over the limit of \d+ bytes/);
    await expect(scanRequests(p, 'ok.jsonl', { maxRequests: 1 })).rejects.toThrow(/2 requests: a batch holds at most 1/);
  });

  it('reports invalid UTF-8 with its line number, not as duplicate ids', async () => {
    const bad = (b: number) => Buffer.concat([Buffer.from('{"custom_id":"'), Buffer.from([b]), Buffer.from('","body":{}}')]);
    const p = file('utf8.jsonl', Buffer.concat([bad(0xff), Buffer.from('\n'), bad(0xfe)]));
    const err = (await scanRequests(p, 'utf8.jsonl', {}).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/utf8\.jsonl:1: not valid UTF-8/);
    expect(err.message).toMatch(/utf8\.jsonl:2: not valid UTF-8/);
    expect(err.message).not.toMatch(/duplicate/);
  });
});

describe('sleep', () => {
  it('leaves no abort listener behind, however many times it runs', async () => {
    const c = new AbortController();
    for (let i = 0; i < 50; i++) await sleep(0, c.signal);
    const { getEventListeners } = (await import('node:events')).EventEmitter;
    expect(getEventListeners(c.signal, 'abort')).toHaveLength(0);
    const pending = sleep(10_000, c.signal);
    c.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });
});

describe('flag tables', () => {
  it('every key of a table is the name commander stores its flag under (so the inferred option type is true)', async () => {
    const { Command } = await import('../../src/cli/commander.js');
    const { addFlags } = await import('../../src/cli/flags/flags.js');
    const { CHAT_FLAGS } = await import('../../src/cli/commands/chat/flags.js');
    const { RESPONSES_FLAGS } = await import('../../src/cli/commands/responses/flags.js');
    for (const table of [CHAT_FLAGS, RESPONSES_FLAGS]) expect(() => addFlags(new Command('x'), table)).not.toThrow();
    expect(() => addFlags(new Command('x'), { maxToken: { flags: '--max-tokens <n>', help: '' } })).toThrow(/stored as maxTokens, not maxToken/);
    const cmd = addFlags(new Command('x'), CHAT_FLAGS).exitOverride();
    cmd.parse(['--max-tokens', '5', '--no-stream', '--stop', 'a', '--stop', 'b'], { from: 'user' });
    expect(cmd.opts()).toMatchObject({ maxTokens: 5, stream: false, stop: ['a', 'b'] });
  });
});

describe('closest: the candidate a typo meant', () => {
  it('takes one edit (a transposition too) over more; nothing when no candidate is close', async () => {
    const { closest } = await import('../../src/internal/did-you-mean.js');
    expect(closest('modle', ['day', 'model', 'command'])).toBe('model');
    expect(closest('complete', ['completed', 'cancelled'])).toBe('completed');
    expect(closest('POTS', ['GET', 'POST', 'PUT'])).toBe('POST');
    expect(closest('xyz', ['day', 'model', 'command'])).toBeUndefined();
    expect(closest('huge', ['max', 'high', 'medium', 'low'])).toBeUndefined();
    expect(closest('temprature', ['temperature', 'top-p'])).toBe('temperature');
    // One edit from both: the one that starts as the typo does, whatever the order.
    expect(closest('fsh', ['bash', 'zsh', 'fish'])).toBe('fish');
    expect(closest('zsj', ['bash', 'fish', 'zsh'])).toBe('zsh');
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 100 }), fc.array(fc.string()), (word, others) => closest(word, [...others, word]) !== undefined));
  });

  it('offers nothing for a word longer than any name, or a name much longer or shorter than the word', async () => {
    const { closest } = await import('../../src/internal/did-you-mean.js');
    expect(closest('x'.repeat(5000), ['x'.repeat(5000), 'x'.repeat(100_000)])).toBeUndefined();
    expect(closest('stage', ['stage'.repeat(1000), 'st'])).toBeUndefined();
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 30 }), fc.string({ maxLength: 30 }), (word, other) => {
      const got = closest(word, [other]);
      return got === undefined || Math.abs(got.length - word.length) <= Math.max(1, Math.floor(word.length / 3));
    }));
  });
});

describe('checkShape: what a reader needs, or a ProtocolError naming the path', () => {
  it('passes a full answer, names the first missing or mistyped path (elements of arrays included)', async () => {
    const { checkShape, SHAPES } = await import('../../src/client/answer-shape.js');
    const batch = { id: 'b', status: 'completed', created_at: 1, request_counts: { total: 1, completed: 1, failed: 0 } };
    expect(() => checkShape(batch, SHAPES.batch)).not.toThrow();
    expect(() => checkShape({ data: [batch, batch] }, SHAPES.batchList)).not.toThrow();
    expect(() => checkShape({ data: [] }, SHAPES.batchList)).not.toThrow();
    expect(() => checkShape({ data: [batch, { ...batch, request_counts: { total: 1 } }] }, SHAPES.batchList)).toThrow(/"data\[\]\.request_counts\.completed" is missing or not a number/);
    expect(() => checkShape({ data: [{ embedding: [0.1] }, { embedding: 'AAAA' }] }, SHAPES.embeddings)).not.toThrow();
    expect(() => checkShape({ data: [{ embedding: 5 }] }, SHAPES.embeddings)).toThrow(/not an array or string/);
    expect(() => checkShape([], SHAPES.chatCompletion)).toThrow(/it is not a JSON object/);
    expect(() => checkShape({ choices: [null] }, SHAPES.chatChunk)).toThrow(ProtocolError);
  });
});

describe('a timeout names the wait that ran out', () => {
  it('the default one, or the --timeout given', () => {
    const err = new TimeoutError('timed out waiting for h');
    addTimeoutHint(err, {}, 120_000);
    expect(err.message).toBe('timed out waiting for h (the default --timeout, 120s)');
    addTimeoutHint(err, {}, 120_000);
    expect(err.message).toBe('timed out waiting for h (the default --timeout, 120s)');
    const given = new TimeoutError('timed out waiting for h');
    addTimeoutHint(given, { timeout: 0.5 }, 500);
    expect(given.message).toBe('timed out waiting for h (--timeout 500ms)');
    const seconds = new TimeoutError('timed out waiting for h');
    addTimeoutHint(seconds, { timeout: 1.25 }, 1250);
    expect(seconds.message).toBe('timed out waiting for h (--timeout 1.25s)');
  });
});
