import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { expect, it, vi } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { until } from '../support/until.js';

// Issue 46, round 6, more: what the sixth newcomer pass found and left.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const line = (id: string, text: string) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: text }] } });

it('batch run --json prints the summed cost of its shards as the decimal it is, a number', async () => {
  const input = join(t.dir, 'costs.jsonl');
  writeFileSync(input, Array.from({ length: 7 }, (_, i) => line(`r${i}`, `hello number ${i} some words`)).join('\n'));
  const r = await run(['batch', 'run', input, '--model', 'local/lorem', '--json', '--watch', '--interval', '0.05', '--max-requests', '2']);
  expect(r.code, r.stderr).toBe(0);
  const job = JSON.parse(r.stdout) as { id: string; shards: { usage: { cost: number } }[]; totals: { cost: number } };
  const floatSum = job.shards.reduce((sum, s) => sum + s.usage.cost, 0);
  // The shards' costs summed in floating point carry noise (0.00024625000000000005): what was printed before.
  expect(String(floatSum)).toMatch(/\d{15,}/);
  expect(job.totals.cost).toBe(Number(floatSum.toFixed(10)));
  expect(r.stdout).toContain(`"cost":${Number(floatSum.toFixed(10))}}`);
  expect(r.stdout).not.toMatch(/"cost":-?\d*\.\d{14,}/);
  // The job's record, listed, sums the same way.
  const jobs = await run(['batch', 'jobs', '--json']);
  expect((JSON.parse(jobs.stdout) as { totals: { cost: number } }[])[0]!.totals.cost).toBe(job.totals.cost);
});

it('--jq over a long stream runs jq a few times, not once a chunk, and prints exactly what it did', async () => {
  const args = ['chat', '--stream', '--json', '--model', 'local/lorem', '--max-tokens', '3300', 'write 3300 words'];
  const plain = await run(args);
  const chunks = plain.stdout.trim().split('\n').map((l) => JSON.parse(l) as { choices: { delta: { content?: string } }[] });
  expect(chunks.length).toBeGreaterThan(3000);
  // What jq prints for `.choices[0].delta.content // empty`, chunk by chunk: a line each ("" is a line too).
  const expected = chunks.map((c) => c.choices[0]?.delta.content).filter((c) => c !== undefined && c !== null).map((c) => `${c}\n`).join('');
  const posted = vi.spyOn(Worker.prototype, 'postMessage');
  try {
    const jq = await run([...args, '--jq', '.choices[0].delta.content // empty']);
    expect(jq.code, jq.stderr).toBe(0);
    expect(jq.stdout).toBe(expected);
    // The check of the filter before anything is sent, then the chunks in a few runs, each over those that came while
    // the last ran (~20 here), not a run a chunk (each run was ~1.3 ms of jq's start-up: 5.3 s for these).
    expect(posted.mock.calls.length).toBeLessThan(100);
  } finally {
    posted.mockRestore();
  }
});

it('--jq over a stream that fails on a later chunk: what came before, then the error, as value by value', async () => {
  const r = await run(['chat', '--stream', '--json', '--model', 'local/lorem', '--max-tokens', '20', '--jq', '.choices[0].delta.content | ascii_downcase', 'write 20 words']);
  expect(r.code).toBe(1);
  // The last chunk (the usage, no choices) has no content: jq fails on it, after the words of the others.
  expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(20);
  expect(r.stdout).toMatch(/^[a-z]+\n/);
  expect(r.stderr).toMatch(/error: --jq: explode input must be a string\n$/);
  // A filter that writes to stderr (debug) as well: printed as run value by value, nothing else said.
  const debug = await run(['chat', '--stream', '--json', '--model', 'local/lorem', '--max-tokens', '5', '--jq', '.choices[0].delta.content // empty | debug', 'write 5 words']);
  expect(debug.code).toBe(0);
  expect(debug.stdout.split('\n')).toHaveLength(7);
});

it('an MCP server that does not answer in time: the error names the --tool-timeout given', async () => {
  const fixture = join(ROOT, 'test/support/mcp-fixture-server.mjs');
  const pidFile = join(t.dir, 'hang.pid');
  const mcp = [process.execPath, fixture, 'hang', pidFile].map((a) => `'${a}'`).join(' ');
  const r = await run(['chat', '--model', 'local/tools', '--tool-timeout', '0.5', '--mcp', mcp, 'hang']);
  expect(r).toMatchObject({ code: 12, stderr: 'error: MCP server fixture-hang did not answer a call of hang in time (--tool-timeout 0.5s)\n' });
  const pid = Number(readFileSync(pidFile, 'utf8'));
  const running = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  // The fixture never ends by itself: waited for within the test's bound (5 s a loaded machine can pass).
  expect(await until(() => !running())).toBe(true);
});

it('batch run --resume with a job that is not there is a usage error (2), as docs/reliability.md says of a name a flag gives', async () => {
  const r = await run(['batch', 'run', '--resume', 'job_nope', '--model', 'local/echo']);
  expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: --resume: no job job_nope (router batch jobs lists them)\n' });
  // Asked about by argument it is not found (5), as `roles show` and `config use` are.
  expect(await run(['batch', 'job', 'job_nope'])).toMatchObject({ code: 5, stderr: 'error: no job job_nope (router batch jobs lists them)\n' });
  const table = readFileSync(join(ROOT, 'docs', 'reliability.md'), 'utf8');
  expect(table).toMatch(/\| 5 \|.*one a flag names, `--role`, `--profile` or `batch run --resume`, is a usage error, 2/);
});
