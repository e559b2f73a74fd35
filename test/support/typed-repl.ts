/** `chat -i` in-process on pretend terminals, `lines` typed one at each prompt (then /exit): its exit code, stderr as read, and stdout. */
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { testStreams } from './inprocess.js';
import { until } from './until.js';

export interface TypedReplOptions {
  /** Stderr's width. */
  columns?: number;
  /** After `chat -i`. */
  args?: string[];
  /** Stdout a pipe (the answers plain), not a terminal. */
  stdoutPiped?: boolean;
}

export async function typedRepl(env: Record<string, string | undefined>, lines: string[], opts: TypedReplOptions = {}): Promise<{ code: number; stderr: string; stdout: string }> {
  const t = testStreams({ env, tty: { stdin: true, stdout: !opts.stdoutPiped, stderr: true } });
  if (opts.columns) Object.assign(t.streams.stderr, { columns: opts.columns });
  const keys = new PassThrough();
  t.streams.stdin = keys;
  const run = main(['node', 'router', 'chat', '-i', ...(opts.args ?? [])], t.streams);
  // The prompt's terminal sequences (the cursor put back, bracketed paste on and off) are not what a person reads.
  const read = () => t.stderr().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  const prompts = () => (read().match(/^> /gm) ?? []).length;
  for (const [i, line] of [...lines, '/exit'].entries()) {
    await until(() => prompts() > i);
    keys.write(`${line}\r`);
  }
  return { code: await run, stderr: read(), stdout: t.stdout() };
}
