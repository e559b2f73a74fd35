import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedCliEnv, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
const sent = sharedCliEnv((e) => (t = e));
let n = 0;
/** A state folder of its own for each test: collections and the ledger start empty. */
const fresh = () => ({ ROUTER_STATE_DIR: join(t.dir, `coll-state-${++n}`) });
const lines = (out: string) => out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
const ledger = (env: { ROUTER_STATE_DIR: string }) => lines(readFileSync(join(env.ROUTER_STATE_DIR, 'usage.jsonl'), 'utf8'));

describe('embedding collections', () => {
  it('embed -c keeps a vector; the same id and text again sends nothing; similar ranks the identical text first', async () => {
    const env = fresh();
    const run = (args: string[]) => t.run(args, { env });
    t.clearRequests();
    const kept = await run(['embed', 'my happy hound', '-c', 'phrases', '--id', 'hound', '--model', 'local/embed', '--store', '--metadata', '{"name": "Hound"}']);
    expect(kept).toMatchObject({ code: 0, stdout: '' });
    expect(await run(['embed', 'a cold winter night', '-c', 'phrases', '--id', 'winter', '--store'])).toMatchObject({ code: 0, stdout: '' });
    expect(sent('/v1/embeddings')).toHaveLength(2);
    // The collection's model is used without --model; the same text again is not sent.
    expect((await run(['embed', 'my happy hound', '-c', 'phrases', '--id', 'hound'])).code).toBe(0);
    expect(sent('/v1/embeddings')).toHaveLength(2);
    const hits = lines((await run(['similar', 'phrases', 'my happy hound'])).stdout);
    expect(hits.map((h) => h.id)).toEqual(['hound', 'winter']);
    expect(hits[0]).toMatchObject({ content: 'my happy hound', metadata: { name: 'Hound' } });
    expect(hits[0].score).toBeCloseTo(1, 5);
    expect(hits[1].score).toBeLessThan(0.5);
    expect(sent('/v1/embeddings')).toHaveLength(3);
    // By a kept entry: nothing is sent, the entry itself left out.
    expect(lines((await run(['similar', 'phrases', '--id', 'hound'])).stdout).map((h) => h.id)).toEqual(['winter']);
    expect(sent('/v1/embeddings')).toHaveLength(3);
    // Each call is in the ledger, by its command.
    expect(ledger(env).map((r) => r.command)).toEqual(['embed', 'embed', 'similar']);
  });

  it('a collections folder that cannot be written is said before anything is sent and paid for', async () => {
    // As a read-only HOME (EROFS, a read-only bind mount: tried by hand) is; here its folder is a file (ENOTDIR).
    const env = fresh();
    mkdirSync(env.ROUTER_STATE_DIR);
    writeFileSync(join(env.ROUTER_STATE_DIR, 'collections'), 'not a folder');
    t.clearRequests();
    for (const args of [['embed', 'a text', '-c', 'scratch', '--id', 'one', '--model', 'local/embed'], ['embed-multi', 'scratch', '-', '--format', 'jsonl', '--model', 'local/embed']]) {
      const r = await t.run(args, { env, input: '{"id":"a","text":"one"}\n' });
      expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '', stderr: `error: cannot use ${join(env.ROUTER_STATE_DIR, 'collections', 'default', 'scratch')}: a part of the path is not a folder\n` });
    }
    expect(sent('/v1/embeddings')).toHaveLength(0);
  });

  it('a collection keeps its model: another is refused in one line, nothing sent', async () => {
    const env = fresh();
    expect((await t.run(['embed', 'x', '-c', 'fixed', '--id', 'a', '--model', 'local/embed'], { env })).code).toBe(0);
    t.clearRequests();
    for (const args of [['embed', 'y', '-c', 'fixed', '--id', 'b', '--model', 'local/lorem'], ['similar', 'fixed', 'y', '--model', 'local/lorem']]) {
      const r = await t.run(args, { env });
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: collection fixed holds vectors of local/embed, not local/lorem: give --model local/embed (or none), or use another collection\n' });
    }
    const items = join(t.dir, 'fixed.jsonl');
    writeFileSync(items, '{"id":"c","content":"z"}\n');
    expect((await t.run(['embed-multi', 'fixed', items, '--model', 'local/lorem'], { env })).code).toBe(2);
    expect(sent('/v1/embeddings')).toHaveLength(0);
  });

  it('refuses bad input in one line before sending', async () => {
    const env = fresh();
    t.clearRequests();
    const cases: [string[], string][] = [
      [['embed', 'x', '-c', 'c1', '--model', 'local/embed'], 'error: --collection needs --id ID: the entry\'s id in the collection\n'],
      [['embed', 'x', '--id', 'a', '--model', 'local/embed'], 'error: --id goes with --collection (-c NAME)\n'],
      [['embed', 'x', '-c', 'c1', '--id', 'a', '--metadata', '[1]', '--model', 'local/embed'], 'error: --metadata must be a JSON object, e.g. \'{"source": "notes"}\'\n'],
      [['embed', 'x', '-c', 'bad/name', '--id', 'a', '--model', 'local/embed'], 'error: collection name "bad/name": use 1 to 64 letters, digits, ".", "_" or "-", not starting with "."\n'],
      [['embed', 'x', '-c', 'c1', '--id', 'a', '--jsonl', '--model', 'local/embed'], 'error: --jsonl does not go with --collection\n'],
      [['similar', 'nothing-here', 'x'], 'error: no collection nothing-here (router collections list shows them)\n'],
      [['embed-multi', 'c1', join(t.dir, 'no-such.jsonl'), '--model', 'local/embed'], ''],
    ];
    for (const [args, stderr] of cases) {
      const r = await t.run(args, { env });
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr.split('\n').filter(Boolean), args.join(' ')).toHaveLength(1);
      if (stderr) expect(r.stderr).toBe(stderr);
    }
    expect(sent('/v1/embeddings')).toHaveLength(0);
  });

  it('embed-multi: sends in batches, resumes (only new or changed texts sent), reads CSV and --files', async () => {
    const env = fresh();
    const file = join(t.dir, 'multi.jsonl');
    const items = Array.from({ length: 7 }, (_, i) => ({ id: `i${i}`, content: `item number ${i}` }));
    writeFileSync(file, items.map((i) => JSON.stringify(i)).join('\n'));
    t.clearRequests();
    const r = await t.run(['embed-multi', 'multi', file, '--model', 'local/embed', '--batch-size', '3', '--concurrency', '2', '--store'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(sent('/v1/embeddings').map((q) => q.body.input.length).sort()).toEqual([1, 3, 3]);
    // Again, with one text changed and one item added: only those two are sent.
    items[2]!.content = 'changed';
    writeFileSync(file, [...items, { id: 'i7', content: 'new one' }].map((i) => JSON.stringify(i)).join('\n'));
    t.clearRequests();
    expect((await t.run(['embed-multi', 'multi', file, '--batch-size', '3', '--store'], { env })).code).toBe(0);
    expect(sent('/v1/embeddings').map((q) => q.body.input)).toEqual([['changed', 'new one']]);
    const top = lines((await t.run(['similar', 'multi', 'changed', '-n', '2'], { env })).stdout);
    expect(top[0]).toMatchObject({ id: 'i2', content: 'changed' });
    expect(top).toHaveLength(2);
    // CSV: a header, the first column the id.
    const csv = join(t.dir, 'multi.csv');
    writeFileSync(csv, 'id,title,body\na,"Hello, world",first\nb,Second,"two ""quoted"""\n');
    t.clearRequests();
    expect((await t.run(['embed-multi', 'csv', csv, '--model', 'local/embed'], { env })).code).toBe(0);
    expect(sent('/v1/embeddings')[0]!.body.input).toEqual(['Hello, world first', 'Second two "quoted"']);
    // A folder's files by a glob, ids their paths.
    const docs = join(t.dir, 'multi-docs');
    mkdirSync(join(docs, 'sub'), { recursive: true });
    writeFileSync(join(docs, 'a.md'), 'alpha');
    writeFileSync(join(docs, 'sub', 'b.md'), 'beta');
    writeFileSync(join(docs, 'c.txt'), 'gamma');
    expect((await t.run(['embed-multi', 'docs', '--files', docs, '**/*.md', '--model', 'local/embed', '--prefix', 'd/'], { env })).code).toBe(0);
    const list = JSON.parse((await t.run(['collections', 'list', '--json'], { env })).stdout);
    expect(list.map((c: { name: string; count: number }) => [c.name, c.count])).toEqual([['csv', 2], ['docs', 2], ['multi', 8]]);
    expect(lines((await t.run(['similar', 'docs', '--id', 'd/a.md'], { env })).stdout).map((h) => h.id)).toEqual(['d/sub/b.md']);
  });

  it('a CSV/TSV whose first row reads as an item, not a header, is said on stderr piped; a header naming the id is not', async () => {
    const env = fresh();
    const headless = join(t.dir, 'headless.csv');
    writeFileSync(headless, 'a,hello there\nb,goodbye\n');
    const r = await t.run(['embed-multi', 'headless', headless, '--model', 'local/embed'], { env });
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toBe(`note: ${headless}: its first row ("a", "hello there") is read as the header, not as an item; a file without a header row loses it (start the file with one, e.g. id,content)\n1 item embedded into headless\n`);
    for (const [file, text] of [['named.tsv', 'doc_id\ttext\nb\tgoodbye\n'], ['named.csv', 'ID,content\nb,goodbye\n'], ['named2.csv', 'name,text\nb,goodbye\n']] as const) {
      const path = join(t.dir, file);
      writeFileSync(path, text);
      expect(await t.run(['embed-multi', 'named', path, '--model', 'local/embed'], { env }), file).toMatchObject({ code: 0, stdout: '', stderr: file === 'named.tsv' ? '1 item embedded into named\n' : 'nothing sent to embed into named: 1 item kept already with the same text\n' });
    }
  });

  it('costs go through --max-cost and the budgets: a refusal before anything is sent, usage in the ledger', async () => {
    const env = fresh();
    const file = join(t.dir, 'spend.jsonl');
    writeFileSync(file, Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: `s${i}`, content: `some words to embed, number ${i}` })).join('\n'));
    t.clearRequests();
    const capped = await t.run(['embed-multi', 'spend', file, '--model', 'local/embed', '--max-cost', '0.0000001'], { env });
    expect(capped.code).toBe(4);
    expect(capped.stderr).toMatch(/^error: this call could cost up to \$[\d.]+, over --max-cost \$0\.0000001/);
    const budget = await t.run(['embed-multi', 'spend', file, '--model', 'local/embed'], { env: { ...env, ROUTER_DAILY_BUDGET: '0.0000001' } });
    expect(budget.code).toBe(4);
    expect(budget.stderr).toMatch(/daily_budget/);
    expect(sent('/v1/embeddings')).toHaveLength(0);
    const ok = await t.run(['embed-multi', 'spend', file, '--model', 'local/embed', '--batch-size', '8', '--usage'], { env: { ...env, ROUTER_DAILY_BUDGET: '1' } });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toMatch(/^usage: \d+ input tokens, cost \$/m);
    const records = ledger(env);
    expect(records).toHaveLength(3);
    expect(records.every((r) => r.command === 'embed-multi' && r.endpoint === '/v1/embeddings' && r.cost > 0)).toBe(true);
    // A dry run prints the body and its bound, sends nothing.
    t.clearRequests();
    const dry = await t.run(['similar', 'spend', 'query text', '--dry-run'], { env });
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual({ input: ['query text'], model: 'local/embed' });
    expect(sent('/v1/embeddings')).toHaveLength(0);
  });

  it('collections list and delete', async () => {
    const env = fresh();
    expect((await t.run(['collections', 'list'], { env })).stdout).toBe('');
    await t.run(['embed', 'x', '-c', 'gone', '--id', 'a', '--model', 'local/embed'], { env });
    expect((await t.run(['collections', 'list'], { env })).stdout).toBe('gone\tlocal/embed\t1\n');
    expect((await t.run(['collections', 'delete', 'gone'], { env })).code).toBe(0);
    expect((await t.run(['collections', 'list', '--json'], { env })).stdout).toBe('[]\n');
    expect(await t.run(['collections', 'delete', 'gone'], { env })).toMatchObject({ code: 5, stderr: 'error: no collection gone (router collections list shows them)\n' });
  });
});
