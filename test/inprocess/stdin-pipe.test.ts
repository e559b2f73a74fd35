import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { runProcess } from '../support/run-process.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv());

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'router.cjs');

it('a prompt piped by a shell (echo hi | router chat) is read from the pipe, without building process.stdin', async () => {
  // Says on stderr when anything asks for process.stdin (the stream node builds on first use).
  const watch = join(t.dir, 'watch-stdin.cjs');
  writeFileSync(watch, `const d = Object.getOwnPropertyDescriptor(process, 'stdin');
Object.defineProperty(process, 'stdin', { configurable: true, enumerable: d.enumerable, get() { process.stderr.write('process.stdin built\\n'); return d.get.call(this); } });\n`);
  const line = `printf 'say hi\\nthen bye' | '${process.execPath}' -r '${watch}' '${BIN}' chat --model local/echo`;
  const r = await runProcess('sh', ['-c', line], { env: { ...process.env, ...t.env } });
  expect(r.stderr).not.toContain('process.stdin built');
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toBe('say hi\nthen bye\n');
});

it('a non-blocking pipe read from its descriptor gives what it had so far and says there is more', async () => {
  const { readFdBounded } = await import('../../src/cli/io/bounded-read.js');
  const fifo = join(t.dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  // Non-blocking, as a pipe a parent process made so is: a read with nothing yet fails with EAGAIN.
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(fifo, constants.O_WRONLY);
  try {
    writeSync(writer, 'the start');
    const read = await readFdBounded(reader, 'stdin', true);
    expect(read?.bytes.toString()).toBe('the start');
    expect(read?.more).toBe(true);
    // Nothing at all yet: the caller reads it as a stream.
    expect(await readFdBounded(reader, 'stdin', true)).toBeUndefined();
    closeSync(writer);
    expect(await readFdBounded(reader, 'stdin', true)).toEqual({ bytes: Buffer.alloc(0), more: false });
  } finally {
    closeSync(reader);
  }
});
