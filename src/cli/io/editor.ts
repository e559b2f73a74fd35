/** $VISUAL or $EDITOR on a file, as git and gh run it: through the shell, so that "code --wait" works. */
import { CliError, EXIT, usage } from '../exit-codes.js';
import type { IO } from './io.js';

export function editorCommand(env: NodeJS.ProcessEnv): string | undefined {
  return [env.VISUAL, env.EDITOR].find((e) => e && e.trim());
}

/** Opens the file in the editor, on the process's own terminal, and waits for it to close. */
export async function editFile(io: IO, path: string): Promise<void> {
  // vi, the editor no one named, is only tried on a terminal: off one it would wait for keys never typed.
  const editor = editorCommand(io.env) ?? (io.stdinTTY && io.stdoutTTY ? 'vi' : undefined);
  if (!editor) throw usage('no editor: set $VISUAL or $EDITOR (vi is tried only on a terminal)');
  const { spawn } = await import('node:child_process');
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', `${editor} "$1"`, 'sh', path], { stdio: 'inherit', env: io.env });
    child.once('error', reject);
    child.once('exit', (status, signal) => resolve(status ?? (signal ? 128 : 1)));
  });
  // The shell's 127: no such program (the shell has said "vi: not found" above). Which one to set is the news.
  if (code === 127) throw new CliError(`the editor (${editor}) was not found: set $VISUAL or $EDITOR to one that is installed (nano, vim, code --wait)`, EXIT.FAILURE);
  if (code !== 0) throw new CliError(`the editor (${editor}) exited with ${code}`, EXIT.FAILURE);
}
