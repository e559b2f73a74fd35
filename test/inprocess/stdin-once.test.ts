// Stdin is read once: two flags that both ask for it are told apart in one line, not as an empty file or no prompt.
import { describe, expect, it } from 'vitest';
import { emulatorUsers } from '../support/users.js';

const users = emulatorUsers('router-stdin-once-');

describe('two readers of stdin', () => {
  it('the second is refused naming the first, exit 2, nothing sent', async () => {
    const u = users.user();
    for (const [args, message] of [
      [['chat', '--model', 'local/echo', '-s', '@-', '-'], 'error: - (the prompt): stdin was read by --system; it can be read once\n'],
      [['chat', '--model', 'local/vision', '-s', '@-', '-a', '-', 'x'], 'error: --attach -: stdin was read by --system; it can be read once\n'],
      [['responses', '--model', 'local/echo', '--instructions', '@-', '--input', '-'], 'error: --input -: stdin was read by --instructions; it can be read once\n'],
      [['decide', '--model', 'local/judge', '--state', '-', '--questions', '-'], 'error: --questions -: stdin was read by --state; it can be read once\n'],
    ] as const) {
      const before = users.emu.requestLog.length;
      const r = await u.run([...args], { input: 'be brief\n' });
      expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '', stderr: message });
      expect(users.emu.requestLog.length).toBe(before);
    }
  });

  it('with the prompt left out it says where stdin went', async () => {
    const u = users.user();
    const r = await u.run(['chat', '--model', 'local/echo', '-s', '@-'], { input: 'be brief\n' });
    expect(r).toMatchObject({ code: 2, stderr: 'error: no prompt: stdin was read by --system; give the prompt as arguments\n' });
  });

  it('decide: piped questions (--questions -) are not taken for the content as well', async () => {
    const u = users.user();
    const questions = JSON.stringify({ q: { type: 'noul', instructions: 'spam?' } });
    expect(await u.run(['decide', '--model', 'local/judge', '--questions', '-'], { input: questions })).toMatchObject({ code: 2, stderr: 'error: no content: give --state FILE, --state-text TEXT, or pipe it on stdin\n' });
    expect(await u.run(['decide', '--model', 'local/judge', '--state-text', 'buy now', '--questions', '-'], { input: questions })).toMatchObject({ code: 0, stdout: expect.stringMatching(/^q\tnoul\t/) });
  });

  it('one reader of stdin works as before', async () => {
    const u = users.user();
    expect(await u.run(['chat', '--model', 'local/echo', '-s', '@-', 'hello'], { input: 'be brief\n' })).toMatchObject({ code: 0, stdout: 'hello\n' });
    expect(await u.run(['chat', '--model', 'local/echo', '-'], { input: 'from stdin\n' })).toMatchObject({ code: 0, stdout: 'from stdin\n' });
  });
});
