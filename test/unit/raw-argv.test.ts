import { describe, expect, it } from 'vitest';
import { notUtf8Argument } from '../../src/cli/raw-argv.js';

// Node reads the command line as UTF-8 and makes each invalid byte U+FFFD: a prompt typed in
// Latin-1 was sent garbled, without a word. The raw bytes tell an invalid byte from a real U+FFFD.

describe('notUtf8Argument', () => {
  const cmdline = (...parts: (string | Buffer)[]) => () => Buffer.concat(parts.flatMap((p) => [Buffer.from(p as string), Buffer.from([0])]));
  it('finds the argument whose U+FFFD came from invalid bytes, by its place from the end', () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]);
    expect(notUtf8Argument(['chat', 'caf\uFFFD'], cmdline('node', '--flag', 'router', 'chat', latin1))).toBe(1);
    expect(notUtf8Argument(['chat', 'caf\uFFFD'], cmdline('node', 'router', 'chat', 'caf\uFFFD'))).toBeUndefined();
    expect(notUtf8Argument(['chat', 'café'], () => { throw new Error('not read when no argument has U+FFFD'); })).toBeUndefined();
    expect(notUtf8Argument(['chat', 'caf\uFFFD'], () => { throw new Error('no /proc'); })).toBeUndefined();
  });
});
