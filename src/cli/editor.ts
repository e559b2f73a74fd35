/** $VISUAL or $EDITOR on a file, as git and gh run it: through the shell, so that "code --wait" works. */
import { CliError, EXIT } from './exit-codes.js';
import type { IO } from './io.js';

export function editorCommand(env: NodeJS.ProcessEnv): string {
  return [env.VISUAL, env.EDITOR].find((e) => e && e.trim()) ?? 'vi';
}

/** Opens the file in the editor, on the process's own terminal, and waits for it to close. */
export async function editFile(io: IO, path: string): Promise<void> {
  const editor = editorCommand(io.env);
  const { spawn } = await import('node:child_process');
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', `${editor} "$1"`, 'sh', path], { stdio: 'inherit', env: io.env });
    child.once('error', reject);
    child.once('exit', (status, signal) => resolve(status ?? (signal ? 128 : 1)));
  });
  if (code !== 0) throw new CliError(`the editor (${editor}) exited with ${code}; the file is at ${path}`, EXIT.FAILURE);
}
