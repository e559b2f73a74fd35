import { expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnvPerFile } from '../support/cli-env.js';
import type { CliEnv } from '../support/cli-env.js';
import { costText } from '../../src/internal/round-cost.js';

// Issue 46, round 9: a developer piping router in scripts, from the tarball.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('router api builds a[][k] objects in command-line order across -f and -F, as gh does', async () => {
  // All -f were taken before all -F: two messages came out as [{content}, {content, role}, {role}] (a 400).
  t.clearRequests();
  const r = await run(['api', 'POST', '/v1/chat/completions', '-F', 'messages[][role]=user', '-f', 'messages[][content]=hi',
    '-F', 'messages[][role]=assistant', '-f', 'messages[][content]=hello', '-F', 'messages[][role]=user', '-f', 'messages[][content]=bye',
    '-f', 'model=local/echo', '--jq', '.choices[0].message.content']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(t.requests().at(-1)!.body.messages).toEqual([
    { role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'bye' },
  ]);
  expect(r.stdout).toBe('bye\n');
});

it('batch run --watch says what the job cost to its last digit, not $0.0000', async () => {
  const file = join(t.dir, 'two.jsonl');
  writeFileSync(file, ['a', 'b'].map((id) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: `hello ${id}` }] } })).join('\n'));
  const r = await run(['batch', 'run', file, '--model', 'local/echo', '--watch', '--interval', '0.05']);
  expect(r.code, r.stderr).toBe(0);
  const id = /job (job_\w+)/.exec(r.stderr)![1]!;
  const cost = (JSON.parse((await run(['batch', 'job', id, '--json'])).stdout) as { totals: { cost: number } }).totals.cost;
  expect(cost).toBeGreaterThan(0);
  expect(cost).toBeLessThan(0.00005);
  const last = r.stderr.trim().split('\n').filter((l) => l.startsWith(`${id}: shards`)).at(-1)!;
  expect(last).toContain(`· $${costText(cost)} ·`);
});

it('auth migrate --dry-run says which keys would move when piped, as every --dry-run does', async () => {
  const off = { ROUTER_KEYCHAIN: 'off', ROUTER_CONFIG_DIR: join(t.dir, 'migrate-config') };
  expect((await run(['login', '--with-key', '--profile', 'work', '--no-verify'], off, 'sk-rt-v1-notreal0000')).code).toBe(0);
  // Piped, it printed nothing at all (its lines were terminal-only status lines).
  // A dry run reads the file only: the keychain on, nothing is asked of it.
  const on = { ...off, ROUTER_KEYCHAIN: '' };
  const r = await run(['auth', 'migrate', '--dry-run'], on);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/^would move the api_key of profile "work" into .+\n$/);
  const none = await run(['auth', 'migrate', '--dry-run'], { ...off, ROUTER_CONFIG_DIR: join(t.dir, 'empty-config') });
  expect(none.stderr).toMatch(/^no key to move: there is no config file \(.+\) yet; router login keeps a key\n$/);
});

it('auth migrate --dry-run with ROUTER_KEYCHAIN=off says the run is refused, not keys that "would move"', async () => {
  const off = { ROUTER_KEYCHAIN: 'off', ROUTER_CONFIG_DIR: join(t.dir, 'migrate-off-config') };
  expect((await run(['login', '--with-key', '--profile', 'work', '--no-verify'], off, 'sk-rt-v1-notreal0000')).code).toBe(0);
  const real = await run(['auth', 'migrate'], off);
  expect(real).toMatchObject({ code: 2, stdout: '', stderr: 'error: ROUTER_KEYCHAIN is off: unset it to move keys into the keychain\n' });
  // Was: "would move the api_key of profile "work" into …" (and in --json, moved: [it]), which the run then refused.
  const said = 'note: ROUTER_KEYCHAIN is off: unset it to move keys into the keychain; no key would move (router auth migrate is refused, exit 2)\n';
  expect(await run(['auth', 'migrate', '--dry-run'], off)).toMatchObject({ code: 0, stdout: '', stderr: said });
  const json = await run(['auth', 'migrate', '--dry-run', '--json'], off);
  expect(json).toMatchObject({ code: 0, stderr: said });
  expect(JSON.parse(json.stdout).moved).toEqual([]);
});

it('embed over several requests sums their cost to the service precision, not 6.000000000000001e-7', async () => {
  const inputs = Array.from({ length: 30 }, (_, i) => String(i + 1));
  const r = await run(['embed', '--model', 'local/embed', '--dimensions', '2', '--per-request', '7', '--json', 'usage'], {}, `${inputs.join('\n')}\n`);
  expect(r.code, r.stderr).toBe(0);
  // Five requests of at most 7 tokens at $0.02 per million: summed as floats they made 6.000000000000001e-7.
  expect(JSON.parse(r.stdout).usage).toMatchObject({ prompt_tokens: 30, cost: 0.0000006 });
});

it('router api: a 401 for an Authorization header given with -H names that header, not the profile key', async () => {
  const r = await run(['api', '/v1/key', '-H', 'Authorization: Bearer sk-rt-v1-wrong']);
  expect(r.code).toBe(3);
  expect(r.stderr).toBe('error: GET /api/v1/key: 401 Unauthorized: Invalid API key (the Authorization header given with -H)\n');
});

it('router api --paginate on an answer that is no list prints it as it came', async () => {
  // It became {"object":"list","data":[{…the key…}]}, so .data.label was null.
  const r = await run(['api', '/v1/key', '--paginate', '--jq', '.data.label']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^sk-rt-v1-\S+\n$/);
  const list = await run(['api', '/v1/models', '--paginate', '--jq', '.data | length']);
  expect(Number(list.stdout)).toBeGreaterThan(2);
});

it('batch jobs piped is one line a job even when the input file name holds a tab or a line break', async () => {
  const line = JSON.stringify({ custom_id: 'a', body: { messages: [{ role: 'user', content: 'hi' }] } });
  for (const name of ['tab\there.jsonl', 'new\nline.jsonl']) {
    writeFileSync(join(t.dir, name), `${line}\n`);
    expect((await run(['batch', 'run', join(t.dir, name), '--model', 'local/echo', '--new'])).code).toBe(0);
  }
  const lines = (await run(['batch', 'jobs'])).stdout.trimEnd().split('\n');
  const ours = lines.filter((l) => /(tab|new).*line|here/.test(l));
  expect(ours).toHaveLength(2);
  for (const l of ours) expect(l.split('\t')).toHaveLength(7);
  expect(ours.join('\n')).toContain('tab\\there.jsonl');
  expect(ours.join('\n')).toContain('new\\nline.jsonl');
});

it('router api: a field named __proto__ is a member of the body, and one name used two ways is a usage error', async () => {
  t.clearRequests();
  // It set Object.prototype.polluted in router's own process (exit 0, nothing printed).
  const r = await run(['api', 'POST', '/v1/chat/completions', '-f', 'model=local/echo', '-F', 'messages[][role]=user', '-f', 'messages[][content]=hi', '-F', '__proto__[polluted]=1', '--jq', '.choices[0].message.content']);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(r.stdout).toBe('hi\n');
  expect(Object.hasOwn(t.requests().at(-1)!.body, '__proto__')).toBe(true);
  // A value then an object under one name: "internal error: Cannot create property 'b' on number '2'", exit 1.
  const both = await run(['api', 'POST', '/v1/chat/completions', '-F', 'a=2', '-F', 'a[b]=1']);
  expect(both.code).toBe(2);
  expect(both.stderr).toBe('error: field "a[b]": a is the value 2 from an earlier field, not an object\n');
  const list = await run(['api', 'POST', '/v1/chat/completions', '-F', 'a[b]=2', '-F', 'a[]=1']);
  expect(list.stderr).toBe('error: field "a[]": a is an object from an earlier field, not a list\n');
});
