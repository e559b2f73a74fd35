import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Issue 46, round 6: what a sixth newcomer pass, from the installed tarball, found.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

const line = (id: string, text: string, extra: Record<string, unknown> = {}) => JSON.stringify({ custom_id: id, body: { ...extra, messages: [{ role: 'user', content: text }] } });

it('batch results with answers cut at their length limit say so on stderr, piped too', async () => {
  const input = join(t.dir, 'cut.jsonl');
  writeFileSync(input, [line('a', 'write 50 words', { max_tokens: 3 }), line('b', 'second'), line('c', 'write 40 words', { max_tokens: 2 })].join('\n'));
  const note = (id: string) => `note: ${id}: 2 of 3 answers were cut at the length limit (finish_reason "length" in the results; a larger max_tokens in their lines lets them finish)\n`;
  const out = join(t.dir, 'cut-out.jsonl');
  const created = await run(['batch', 'create', input, '--model', 'local/lorem', '--watch', '--interval', '0.05', '--results', out]);
  expect(created.code).toBe(0);
  const id = /created (batch_\w+)/.exec(created.stderr)![1]!;
  expect(created.stderr).toContain(note(id));
  expect(readFileSync(out, 'utf8').match(/"finish_reason":"length"/g)).toHaveLength(2);
  // batch get --results, to stdout: the results are stdout's, the note stderr's.
  const got = await run(['batch', 'get', id, '--results']);
  expect(got.stdout.trim().split('\n')).toHaveLength(3);
  expect(got.stderr).toBe(note(id));
  // batch run merges them: said once, with the job.
  const ran = await run(['batch', 'run', input, '--model', 'local/lorem', '--watch', '--interval', '0.05', '--results', join(t.dir, 'cut-run.jsonl')]);
  expect(ran.code).toBe(0);
  const job = /(job_\w+)/.exec(ran.stderr)![1]!;
  expect(ran.stderr).toContain(note(job));
  // None cut: nothing said.
  const whole = join(t.dir, 'whole.jsonl');
  writeFileSync(whole, [line('a', 'first'), line('b', 'second')].join('\n'));
  const quiet = await run(['batch', 'create', whole, '--model', 'local/echo', '--watch', '--interval', '0.05', '--results', join(t.dir, 'whole-out.jsonl')]);
  expect(quiet.stderr).not.toMatch(/length limit/);
});
