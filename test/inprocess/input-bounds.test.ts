import { execFileSync } from 'node:child_process';
import { existsSync, truncateSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STACK_FRAME, startCliEnv, type CliEnv } from '../support/cli-env.js';

// Input without an end (/dev/zero), larger than any request, or a line longer than a batch:
// one line, exit 2, nothing sent, and never all of memory or disk.
let t: CliEnv;
let big: string;
let oneLine: string;
beforeAll(async () => {
  t = await startCliEnv();
  // Sparse files: 300 MiB of NUL bytes at no cost of disk.
  big = join(t.dir, 'big.json');
  writeFileSync(big, '');
  truncateSync(big, 300 * 1024 * 1024);
  // One byte over the bound: create and run each read all of it to count the line.
  oneLine = join(t.dir, 'one-line.jsonl');
  writeFileSync(oneLine, '');
  truncateSync(oneLine, 200_000_001);
});
afterAll(() => t.close());

const TOO_MUCH = (what: string) => `error: ${what} holds more than 200 MB, more than any request of the service takes; nothing was sent\n`;

describe('an input without end or over the bound is refused, nothing sent', () => {
  const posts = () => t.requests().filter((r) => r.method === 'POST').length;
  const cases: [string, string[], string][] = [
    ['api --input /dev/zero', ['api', 'POST', '/v1/chat/completions', '--input', '/dev/zero'], '--input: /dev/zero'],
    ['api -F k=@/dev/zero', ['api', 'POST', '/v1/embeddings', '-F', 'input=@/dev/zero'], '-F: /dev/zero'],
    ['responses --tools /dev/zero', ['responses', '--model', 'local/echo', '--tools', '/dev/zero', 'hi'], '--tools: /dev/zero'],
    ['decide --questions /dev/zero', ['decide', '--model', 'local/judge', '--state-text', 'x', '--questions', '/dev/zero'], '--questions: /dev/zero'],
  ];
  for (const [name, args, what] of cases) {
    it(name, async () => {
      const before = posts();
      const r = await t.run(args);
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: TOO_MUCH(what) });
      expect(posts()).toBe(before);
    });
  }

  it('a file over the bound is refused by its size, before it is read', async () => {
    const r = await t.run(['api', 'POST', '/v1/chat/completions', '--input', big]);
    expect(r).toMatchObject({ code: 2, stderr: TOO_MUCH(`--input: ${big}`) });
  });

  it('a file within the bound, and a folder or missing file, read as before', async () => {
    const body = join(t.dir, 'body.json');
    writeFileSync(body, JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'from a file' }] }));
    const ok = await t.run(['api', 'POST', '/v1/chat/completions', '--input', body]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).choices[0].message.content).toBe('from a file');
    expect(await t.run(['api', 'POST', '/v1/x', '--input', t.dir])).toMatchObject({ code: 2, stderr: `error: --input ${t.dir}: is a folder: name a file in it\n` });
    expect(await t.run(['api', 'POST', '/v1/x', '-F', `a=@${join(t.dir, 'nope')}`])).toMatchObject({ code: 2, stderr: `error: -F ${join(t.dir, 'nope')}: cannot read it (no such file or folder)\n` });
  });

  it('a named pipe that is written to is read as a file', async () => {
    const fifo = join(t.dir, 'body.fifo');
    execFileSync('mkfifo', [fifo]);
    const body = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'through a pipe' }] });
    // The writer waits for the reader's open, as a shell's `> fifo` does.
    const [r] = await Promise.all([t.run(['api', 'POST', '/v1/chat/completions', '--input', fifo]), writeFile(fifo, body)]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).choices[0].message.content).toBe('through a pipe');
    expect(existsSync(fifo)).toBe(true);
  });
});

describe('batch input', () => {

  it('a line longer than a whole batch is named by its number and length, for create and run', async () => {
    const create = await t.run(['batch', 'create', oneLine]);
    expect(create.code).toBe(2);
    expect(create.stderr).toContain(`${oneLine}:1: 200000001 bytes long: one request is larger than a whole batch may be (200000000 bytes)`);
    expect(create.stderr).not.toMatch(/UTF-8|not JSON/);
    const run = await t.run(['batch', 'run', oneLine, '--model', 'local/echo']);
    expect(run).toMatchObject({ code: 2, stderr: `error: ${oneLine}:1: 200000001 bytes long: one request is larger than a whole batch may be (200000000 bytes)\n` });
  });

  it('the lines after a too-long one are still checked, each with its own number', async () => {
    const file = join(t.dir, 'mixed.jsonl');
    const ok = JSON.stringify({ custom_id: 'a', body: { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] } });
    writeFileSync(file, `${ok}\n${'x'.repeat(3000)}\nnot json\n`);
    const r = await t.run(['batch', 'run', file, '--max-bytes', '1K']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}:2: 3000 bytes long: one request is larger than a whole batch may be (1024 bytes)`);
    expect(r.stderr).toContain(`${file}:3: not JSON`);
    expect(r.stderr).not.toMatch(STACK_FRAME);
  });
});
