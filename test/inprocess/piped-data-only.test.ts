import { expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnvPerFile } from '../support/cli-env.js';
import type { CliEnv } from '../support/cli-env.js';

// Piped stdout carries the data and nothing else (DEVELOPERS.md): what a person reads about the data
// (a dry run's cost bound) is on stderr, as chat --dry-run's is, so `cut`, `wc -l` and a read loop see rows only.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

const requests = (name: string, n: number) => {
  const file = join(t.dir, name);
  writeFileSync(file, Array.from({ length: n }, (_, i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `line ${i}` }] } })).join('\n'));
  return file;
};

it('batch run --dry-run piped: stdout is one tab-separated row a shard, the cost bound on stderr', async () => {
  const file = requests('three.jsonl', 3);
  const r = await run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '2', '--dry-run']);
  expect(r.code, r.stderr).toBe(0);
  // Was: the two rows, then "cost bound: local/echo: 3 requests, at most …" as a third line of stdout.
  const rows = r.stdout.split('\n').slice(0, -1);
  expect(rows.map((l) => l.split('\t').length)).toEqual([8, 8]);
  expect(rows.map((l) => l.split('\t')[0])).toEqual(['1', '2']);
  expect(r.stderr).toMatch(/^cost bound: local\/echo: 3 requests, at most \$[\d.]+ at the batch price \(half\)/m);
  // --json keeps it in the object, as before.
  const json = await run(['batch', 'run', file, '--model', 'local/echo', '--max-requests', '2', '--dry-run', '--json']);
  expect(JSON.parse(json.stdout).cost_bound).toMatchObject({ model: 'local/echo', requests: 3 });
  expect(json.stderr).not.toMatch(/^cost bound/m);
});

it('batch create --dry-run piped prints nothing on stdout (nothing was made); the bound and the dry run on stderr', async () => {
  const file = requests('two.jsonl', 2);
  const r = await run(['batch', 'create', file, '--model', 'local/echo', '--dry-run']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/^cost bound: local\/echo: 2 requests, at most .*\ndry run: 2 requests to \/v1\/chat\/completions with local\/echo checked; nothing was sent\n$/);
  const json = await run(['batch', 'create', file, '--model', 'local/echo', '--dry-run', '--json']);
  expect(JSON.parse(json.stdout)).toMatchObject({ requests: 2, cost_bound: { model: 'local/echo', requests: 2 } });
  expect(t.requests().filter((q) => q.method === 'POST')).toEqual([]);
});

it('router usage piped has no header, as every listing piped (gh does the same): rows, then the total', async () => {
  expect((await run(['chat', '--model', 'local/echo', 'hi'])).code).toBe(0);
  const r = await run(['usage']);
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^\d{4}-\d{2}-\d{2}\t1\t\d+\t\d+\t\d+\t[\d.]+$/);
  expect(lines.at(-1)).toMatch(/^total\t1\t/);
  // The header a terminal gets is named by --help, in order.
  expect((await run(['usage', '--help'])).stdout.replace(/\s+/g, ' ')).toContain('Piped, one tab-separated line per row, then one for the total: the --by key (day, model, …), calls, prompt tokens, completion tokens, total tokens, cost (USD).');
});
