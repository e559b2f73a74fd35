/** $VISUAL or $EDITOR on a file, as git and gh run it: through the shell, so that "code --wait" works. */
import { CliError, EXIT, usage } from '../exit-codes.js';
import type { IO } from './io.js';

/** The editor's command line and the variable it was read from ($VISUAL before $EDITOR). */
function namedEditor(env: NodeJS.ProcessEnv): { command: string; from: string } | undefined {
  for (const from of ['VISUAL', 'EDITOR']) if (env[from]?.trim()) return { command: env[from], from };
  return undefined;
}

/** Opens the file in the editor, on the process's own terminal, and waits for it to close. */
export async function editFile(io: IO, path: string): Promise<void> {
  // vi, the editor no one named, is only tried on a terminal: off one it would wait for keys never typed.
  const named = namedEditor(io.env) ?? (io.stdinTTY && io.stdoutTTY ? { command: 'vi', from: undefined } : undefined);
  if (!named) throw usage('no editor: set $VISUAL or $EDITOR (vi is tried only on a terminal)');
  const editor = named.command;
  const program = /^\s*([^\s'"=;&|<>()$`\\]+)(?:\s|$)/.exec(editor)?.[1];
  // The program by its name, then where it came from: the variable, with the whole command where it says more.
  const from = !named.from ? 'tried as neither $VISUAL nor $EDITOR is set' : editor.trim() === program ? `from $${named.from}` : `from $${named.from}: ${editor.trim()}`;
  const notFound = new CliError(`the editor ${program ?? 'command'} (${from}) was not found: set $VISUAL or $EDITOR to one that is installed (nano, vim, code --wait)`, EXIT.FAILURE);
  // Looked up first, as the shell would, so that only this line says so (not the shell's "sh: 1: vi: not found" above it).
  if (program && (await shell(['command -v "$1" >/dev/null 2>&1', 'sh', program], 'ignore', io.env)) !== 0) throw notFound;
  const code = await shell([`${editor} "$1"`, 'sh', path], 'inherit', io.env);
  // The shell's 127: no such program, where the command is more than a name (FOO=1 vim).
  if (code === 127) throw notFound;
  if (code !== 0) throw new CliError(`the editor ${program ?? 'command'} (${from}) exited with ${code}`, EXIT.FAILURE);
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
