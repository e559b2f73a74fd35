/**
 * Scripting as with gh: --json FIELDS and --jq on every command with --json, router api, the usage
 * ledger and router usage, and conversations; in process against the emulator over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { seedScripting } from '../support/scripting-state.js';

let t: CliEnv;
let batchId: string;
let jobId: string;
let jsonl: string;
beforeAll(async () => {
  t = await startCliEnv();
  ({ jsonl, batchId, jobId } = await seedScripting(t));
});
afterAll(() => t.close());

const parse = (s: string) => JSON.parse(s) as unknown;
/** What the fields apply to: array elements, a list page's items (unless the page itself was selected), or the object. */
const items = (v: unknown, wanted: string[]): Record<string, unknown>[] => {
  if (Array.isArray(v)) return v;
  const o = v as { object?: string; data?: unknown[] };
  const page = o.object === 'list' && Array.isArray(o.data) && !wanted.some((f) => f in o);
  return page ? (o.data as Record<string, unknown>[]) : [v as Record<string, unknown>];
};

describe('--json FIELDS on every command with --json', () => {
  const cases: [string, string[], string, Record<string, string>?][] = [
    ['chat', ['chat', '--model', 'local/echo', 'hi', '--json'], 'model,usage'],
    ['chat --stream', ['chat', '--model', 'local/lorem', '--stream', 'write 3 words', '--json'], 'id,choices'],
    ['responses', ['responses', '--model', 'local/echo', 'hi', '--json'], 'status,output_text'],
    ['embed', ['embed', 'hi', '--model', 'local/embed', '--json'], 'model,usage'],
    ['decide', ['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'q', 'ok?', '--json'], 'answers,usage', { ROUTER_MANAGEMENT_KEY: 'MGMT' }],
    ['speak -o', ['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', 'OUT', '--json'], 'bytes,content_type', { ROUTER_MANAGEMENT_KEY: 'MGMT' }],
    ['config list', ['config', 'list', '--json'], 'current,profiles'],
    ['batch create', ['batch', 'create', 'JSONL', '--json'], 'id,status'],
    ['batch list', ['batch', 'list', '--json'], 'id,status'],
    ['batch get', ['batch', 'get', 'BATCH', '--json'], 'status,request_counts'],
    ['batch run --dry-run', ['batch', 'run', 'JSONL', '--dry-run', '--json'], 'requests,shards'],
    ['batch jobs', ['batch', 'jobs', '--json'], 'id,totals'],
    ['batch job', ['batch', 'job', 'JOB', '--json'], 'shards,totals'],
    ['usage', ['usage', '--json'], 'total'],
    ['conversations list', ['conversations', 'list', '--json'], 'id,turns'],
  ];
  const fill = (args: string[]) => args.map((a) => ({ JSONL: jsonl, BATCH: batchId, JOB: jobId, OUT: join(t.dir, 'o.mp3') })[a] ?? a);
  for (const [name, args, fields, env] of cases) {
    it(`${name}: only ${fields}; an unknown field names the fields and sends nothing`, async () => {
      const e = env ? { ROUTER_MANAGEMENT_KEY: t.managementKey } : {};
      const r = await t.run([...fill(args), fields], { env: e });
      expect(r.code, r.stderr).toBe(0);
      const wanted = fields.split(',');
      const lines = r.stdout.trim().split('\n');
      for (const line of name === 'chat --stream' ? lines : [r.stdout]) {
        for (const item of items(parse(line), wanted)) {
          expect(Object.keys(item).every((k) => wanted.includes(k)), `${Object.keys(item)}`).toBe(true);
          expect(Object.keys(item).length).toBeGreaterThan(0);
        }
      }
      t.clearRequests();
      const bad = await t.run([...fill(args).slice(0, -1), '--json=nonesuch'], { env: e });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/unknown JSON field "nonesuch"; fields of "[\w ]+": \w+/);
      expect(t.requests()).toHaveLength(0);
    });
  }

  it('a word after --json that is not a field list stays the prompt', async () => {
    const r = await t.run(['chat', '--model', 'local/echo', '--json', 'hello']);
    expect((parse(r.stdout) as any).choices[0].message.content).toBe('hello');
  });
});

describe('--jq', () => {
  it('on a list and on a single object prints raw strings; a bad expression is refused before sending', async () => {
    const ids = await t.run(['batch', 'list', '--jq', '.data[].id']);
    expect(ids.stdout.split('\n')).toContain(batchId);
    const one = await t.run(['batch', 'get', batchId, '--jq', '.request_counts.total']);
    expect(one.stdout).toBe('3\n');
    const text = await t.run(['chat', '--model', 'local/echo', '--jq', '.choices[0].message.content', 'plain text']);
    expect(text.stdout).toBe('plain text\n');
    const chunks = await t.run(['chat', '--model', 'local/lorem', '--stream', '--jq', '.choices[0].delta.content // empty', 'write 3 words']);
    expect(chunks.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(3);
    expect(chunks.stdout).not.toContain('"');
    t.clearRequests();
    const bad = await t.run(['chat', '--model', 'local/echo', '--jq', '.[', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --jq: syntax error/);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(t.requests()).toHaveLength(0);
  });

  it('a refusal of the JSON output names --jq when --jq was typed, not the --json it implies', async () => {
    const cases: [string[], string][] = [
      [['speak', 'hi', '--model', 'local/tts', '--voice', 'alloy', '--jq', '.bytes'], '--jq goes with -o FILE (stdout carries the audio)'],
      [['embed', 'a', '--model', 'local/embed', '--jsonl', '--jq', '.index'], '--jq and --jsonl cannot be combined'],
      [['batch', 'list', '--jsonl', '--jq', '.id'], '--jq and --jsonl cannot be combined'],
      [['batch', 'get', batchId, '--results', '--jq', '.id'], '--jq and --results to stdout cannot be combined'],
      [['batch', 'run', jsonl, '--model', 'local/echo', '--results', '--jq', '.id'], '--jq and --results to stdout cannot be combined (give --results a file)'],
    ];
    for (const [args, line] of cases) expect(await t.run(args, { env: { ROUTER_MANAGEMENT_KEY: t.managementKey } })).toMatchObject({ code: 2, stdout: '', stderr: `error: ${line}\n` });
    expect((await t.run(['embed', 'a', '--model', 'local/embed', '--jsonl', '--json'])).stderr).toBe('error: --json and --jsonl cannot be combined\n');
  });
});
