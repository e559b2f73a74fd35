/** `chat -i` in-process on pretend terminals, `lines` typed one at each prompt (then /exit): its exit code and stderr as read. */
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { testStreams } from './inprocess.js';
import { until } from './until.js';

export async function typedRepl(env: Record<string, string>, lines: string[], columns?: number): Promise<{ code: number; stderr: string }> {
  const t = testStreams({ env, tty: { stdin: true, stdout: true, stderr: true } });
  if (columns) Object.assign(t.streams.stderr, { columns });
  const keys = new PassThrough();
  t.streams.stdin = keys;
  const run = main(['node', 'router', 'chat', '-i'], t.streams);
  // The prompt's terminal sequences (the cursor put back, bracketed paste on and off) are not what a person reads.
  const read = () => t.stderr().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  const prompts = () => (read().match(/^> /gm) ?? []).length;
  for (const [i, line] of [...lines, '/exit'].entries()) {
    await until(() => prompts() > i);
    keys.write(`${line}\r`);
  }
  return { code: await run, stderr: read() };
}
