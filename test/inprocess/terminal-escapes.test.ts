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

describe('a line end split between two pieces of a stream', () => {
  it('shows as a line end, not as an escaped CR (reasoning on a terminal)', async () => {
    const { reasoningPrinter } = await import('../../src/cli/answers/request-extras.js');
    const { testStreams } = await import('../support/inprocess.js');
    const { IO } = await import('../../src/cli/io/io.js');
    const t = testStreams({ tty: { stdin: false, stdout: false, stderr: true }, env: { NO_COLOR: '1' } });
    const printer = reasoningPrinter(new IO({}, t.streams), { showReasoning: true });
    for (const piece of ['first\r', '\nsecond \r over\r\n']) printer.write(piece);
    printer.end();
    expect(t.stderr()).toBe('first\nsecond \\r over\n');
  });
});

describe('router api on a terminal', () => {
  it('refuses the speech route before sending (its answer is audio), as speak does; redirected it writes the audio', async () => {
    const u = users.user();
    const args = ['api', 'POST', '/v1/audio/speech', '-f', 'model=local/tts', '-f', 'voice=alloy', '-f', 'input=hi'];
    const before = users.emu.requestLog.length;
    const r = await u.run(args, { tty: { stdout: true } });
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/^error: refusing to write audio to a terminal: redirect stdout/) });
    expect(users.emu.requestLog.length).toBe(before);
    const piped = await u.run(args);
    expect(piped.code).toBe(0);
    expect(piped.stdout.length).toBeGreaterThan(1000);
  });
});
