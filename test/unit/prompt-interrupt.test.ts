import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { IO } from '../../src/cli/io/io.js';
import { readSecret } from '../../src/cli/commands/config/shared.js';

// Ctrl-C pressed before a prompt took the terminal is a SIGINT (the run's abort signal), not a key the
// prompt sees: the prompt must end at once, not open and wait (the race a tmux test of login hit).
describe('a prompt after Ctrl-C', () => {
  it('rejects at once instead of waiting for a key', async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => stdin });
    const io = new IO({}, { stdin, stdout: new PassThrough(), stderr: new PassThrough(), env: {}, tty: { stdin: true, stdout: true, stderr: true } });
    const controller = new AbortController();
    controller.abort(Object.assign(new Error('interrupted'), { name: 'AbortError' }));
    io.interrupt = controller.signal;
    // Loaded before the clock starts: its first import can take seconds on a loaded machine, and is not the wait looked for.
    await import('@inquirer/prompts');
    // The defect waits for a key forever: the bound only ends that wait.
    const waited = new Promise((resolve) => setTimeout(resolve, 20_000, 'still waiting'));
    const outcome = await Promise.race([readSecret(io, 'API key').then(() => 'answered', (e: Error) => e.name), waited]);
    expect(outcome).toBe('AbortPromptError');
  });
});
