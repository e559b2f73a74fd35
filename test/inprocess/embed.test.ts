import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedCliEnv, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
const sent = sharedCliEnv((e) => (t = e));

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

  it('"-" reads the inputs from stdin, alone: beside other arguments it is refused, nothing sent', async () => {
    const alone = await t.run(['embed', '-', '--model', 'local/embed', '--jq', '.data | length'], { input: 'one\ntwo\n' });
    expect(alone).toMatchObject({ code: 0, stdout: '2\n' });
    t.clearRequests();
    for (const args of [['a', '-', 'b'], ['-', '-']]) {
      const r = await t.run(['embed', ...args, '--model', 'local/embed'], { input: 'MID\n' });
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: "-" reads the inputs from stdin, one a line: give it alone, or give the inputs as arguments\n' });
    }
    expect(sent('/v1/embeddings')).toHaveLength(0);
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

// router serve's own embeddings walk `model` then `models` as chat's and the gateway's do (routing/embed.ts):
// before, an id of `model` that names no embedding model was a 400 whatever `models` listed after it.
describe('router serve embeddings with a models list', () => {
  it('pass over an id that names no embedding model for the next, and say so with --router-metadata', async () => {
    const r = await t.run(['embed', 'hi', '--model', 'nosuch/model', '--models', 'local/echo,local/embed', '--dimensions', '2', '--router-metadata']);
    expect(r.code, r.stderr).toBe(0);
    const answer = JSON.parse(r.stdout) as { model: string; data: unknown[] };
    expect([answer.model, answer.data.length]).toEqual(['local/embed', 1]);
    expect(r.stderr).toContain('router: embeddings: nosuch/model -> local/embed via local-alpha (attempt 1); passed over, not asked: none (nosuch/model is not a valid model ID), none (local/echo is a chat model, not an embedding model; /v1/chat/completions serves it)\n');
    const last = sent('/v1/embeddings').at(-1)!.body;
    expect(last.models).toEqual(['local/echo', 'local/embed']);
  });

  it('answer the first id\'s 400 when none names an embedding model, and the 404 when no provider is allowed', async () => {
    const none = await t.run(['embed', 'hi', '--model', 'nosuch/model', '--models', 'local/echo']);
    expect([none.code, none.stderr]).toEqual([2, 'error: POST /api/v1/embeddings: 400 Bad Request: nosuch/model is not a valid model ID (the list: router models)\n']);
    const r = await t.run(['embed', 'hi', '--model', 'local/embed', '--provider-only', 'nobody']);
    expect(r.stderr).toMatch(/404 Not Found: No endpoints found matching your provider preferences/);
  });
});
