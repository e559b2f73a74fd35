/**
 * `router api` on an event stream that fails under its 200 (task cli24): the bytes go out as they came,
 * and the exit code is that of the error's status, said in one line, for chat, messages and Responses.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
beforeAll(async () => {
  t = await startCliEnv();
});
afterAll(() => t.close());

const ASKS: [string, string[], RegExp][] = [
  ['/v1/chat/completions', ['-F', 'messages[][role]=user', '-f', 'messages[][content]=write 30 words'], /"error":\{"code":502,[^\n]*"finish_reason":"error"[^\n]*\n\ndata: \[DONE\]\n\n$/],
  ['/v1/messages', ['-F', 'max_tokens=200', '-F', 'messages[][role]=user', '-f', 'messages[][content]=write 30 words'], /event: error\ndata: \{"type":"error","error":\{"type":"api_error"[^\n]*\n\n$/],
  ['/v1/responses', ['-f', 'input=write 30 words'], /event: response\.failed\ndata: [^\n]*"status":"failed"[^\n]*\n\n$/],
];

it.each(ASKS)('POST %s: a stream broken by an error chunk is printed whole and exits 7 (its 502), said on stderr', async (path, fields, last) => {
  const args = ['api', 'POST', path, '-f', 'model=local/lorem', '-F', 'stream=true', ...fields];
  // Was exit 0 with nothing said.
  const broken = await t.run([...args, '-H', 'x-router-fault: error-chunk,after=2']);
  expect(broken.stdout).toMatch(last);
  expect(broken.stderr).toMatch(new RegExp(`^error: POST /api${path.replace(/\//g, '\\/')}: the stream ended in an error \\(502 Bad Gateway\\): .+\\n$`));
  expect(broken.code).toBe(7);
  const whole = await t.run(args);
  expect(whole).toMatchObject({ code: 0, stderr: '' });
});
