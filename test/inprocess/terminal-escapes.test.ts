// An answer's control characters on a terminal: shown escaped, never run as escape sequences (retitle, clear, hide).
import { describe, expect, it } from 'vitest';
import { emulatorUsers } from '../support/users.js';

const users = emulatorUsers('router-escapes-');
const TTY = { tty: { stdout: true, stderr: true } };
// What a web page or a document a model read can make it say: retitle the window, clear the screen, overwrite a line.
const HOSTILE = 'look \x1b]0;pwned\x07 here \x1b[2J then\rover';
const SHOWN = 'look \\u001b]0;pwned\\u0007 here \\u001b[2J then\\rover';

describe('an answer with control characters', () => {
  it('is shown escaped when rendered on a terminal, streamed or not', async () => {
    const u = users.user();
    for (const stream of [[], ['--stream'], ['--no-stream']]) {
      const r = await u.run(['chat', '--model', 'local/echo', ...stream, HOSTILE], TTY);
      expect(r.code, stream.join(' ')).toBe(0);
      expect(r.stdout).toBe(`${SHOWN}\n`);
    }
    const paragraphs = await u.run(['chat', '--model', 'local/echo', 'one\r\n\r\ntwo'], TTY);
    expect(paragraphs.stdout).toBe('one\n\ntwo\n');
  });

  it('is printed exactly as received when piped, or with --raw', async () => {
    const u = users.user();
    expect((await u.run(['chat', '--model', 'local/echo', HOSTILE])).stdout).toBe(`${HOSTILE}\n`);
    expect((await u.run(['chat', '--model', 'local/echo', '--raw', HOSTILE], TTY)).stdout).toBe(`${HOSTILE}\n`);
  });

  it('reasoning shown on a terminal is escaped too', async () => {
    const u = users.user();
    const r = await u.run(['chat', '--model', 'local/thinker', '--show-reasoning', HOSTILE], TTY);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(SHOWN);
    expect(r.stderr).not.toContain('\x1b]0;');
  });
});
