// Bidirectional controls reorder what a terminal shows (a file "x\u202egpj.exe" reads "xexe.jpg", an
// argument can read as another): shown escaped wherever C0/C1 controls are, from the one helper.
import { describe, expect, it } from 'vitest';
import { emulatorUsers } from '../support/users.js';
import { visible } from '../../src/internal/visible.js';

const users = emulatorUsers('router-bidi-');
const TTY = { tty: { stdout: true, stderr: true } };
const BIDI = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'];
const HOSTILE = 'rm -rf /tmp/x \u202e; echo safe \u2066hidden\u2069';
const SHOWN = 'rm -rf /tmp/x \\u202e; echo safe \\u2066hidden\\u2069';

describe('bidirectional controls', () => {
  it('the helper escapes each of them, as it does C0 and C1 (tool arguments in the --approve prompt, titles use it)', () => {
    for (const c of BIDI) expect(visible(`a${c}b`)).toBe(`a\\u${c.charCodeAt(0).toString(16)}b`);
    expect(visible('plain עברית text')).toBe('plain עברית text');
  });

  it('in an answer on a terminal: escaped, streamed or not; piped: as received', async () => {
    const u = users.user();
    for (const stream of [[], ['--no-stream']]) {
      const r = await u.run(['chat', '--model', 'local/echo', ...stream, HOSTILE], TTY);
      expect(r).toMatchObject({ code: 0, stdout: `${SHOWN}\n` });
    }
    expect((await u.run(['chat', '--model', 'local/echo', HOSTILE])).stdout).toBe(`${HOSTILE}\n`);
  });

  it('in a file name of an error line: escaped', async () => {
    const u = users.user();
    const r = await u.run(['chat', '--model', 'local/echo', '--attach', 'photo\u202egpj.exe', 'hi'], TTY);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('photo\\u202egpj.exe');
    expect(r.stderr).not.toContain('\u202e');
  });

  it('in a conversation title listed on a terminal: escaped', async () => {
    const u = users.user();
    expect((await u.run(['chat', '--model', 'local/echo', HOSTILE])).code).toBe(0);
    // Wide enough for the whole title: a narrower terminal cuts it with "…" (tables fit the terminal).
    const list = await u.run(['conversations', 'list'], { ...TTY, columns: 200 });
    expect(list.code).toBe(0);
    expect(list.stdout).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    expect(list.stdout).toContain('\\u202e');
  });
});
