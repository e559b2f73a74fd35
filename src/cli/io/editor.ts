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
  const notFound = new CliError(`the editor (${editor}) was not found: set $VISUAL or $EDITOR to one that is installed (nano, vim, code --wait)`, EXIT.FAILURE);
  // Looked up first, as the shell would, so that only this line says so (not the shell's "sh: 1: vi: not found" above it).
  const program = /^\s*([^\s'"=;&|<>()$`\\]+)(?:\s|$)/.exec(editor)?.[1];
  if (program && (await shell(['command -v "$1" >/dev/null 2>&1', 'sh', program], 'ignore', io.env)) !== 0) throw notFound;
  const code = await shell([`${editor} "$1"`, 'sh', path], 'inherit', io.env);
  // The shell's 127: no such program, where the command is more than a name (FOO=1 vim).
  if (code === 127) throw notFound;
  if (code !== 0) throw new CliError(`the editor (${editor}) exited with ${code}`, EXIT.FAILURE);
}

/** `sh -c` with these words, its exit code. */
async function shell(words: string[], stdio: 'inherit' | 'ignore', env: NodeJS.ProcessEnv): Promise<number> {
  const { spawn } = await import('node:child_process');
  return new Promise<number>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', ...words], { stdio, env });
    child.once('error', reject);
    child.once('exit', (status, signal) => resolve(status ?? (signal ? 128 : 1)));
  });
}
