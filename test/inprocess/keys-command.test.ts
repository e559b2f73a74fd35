import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { runInProcess } from '../support/inprocess.js';
import { RouterClient } from '../../src/client/index.js';
import { startFixtureServer } from '../support/fixture-server.js';

// `router keys …` over real HTTP against the emulator's management API (the flavour changes only
// batches, so one is enough): the key shown once, listings that never show it, bad input refused
// before anything is sent, and a standard key's refusal said as the management key it needed.
let t: CliEnv;
let mgmt: Record<string, string>;
beforeAll(async () => {
  t = await startCliEnv();
  mgmt = { ROUTER_MANAGEMENT_KEY: t.managementKey };
});
afterAll(() => t.close());

const keys = (args: string[], env: Record<string, string> = mgmt) => t.run(['keys', ...args], { env });
const chatWith = async (key: string) => (await t.run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_API_KEY: key, ROUTER_NO_LOG: '1' } })).code;
const calls = () => t.requests().length;

async function created(name: string, ...flags: string[]): Promise<{ key: string; hash: string; stderr: string }> {
  const r = await keys(['create', name, ...flags]);
  expect(r.code, r.stderr).toBe(0);
  const hash = /hash[^:]*: ([0-9a-f]{64})\)/.exec(r.stderr)![1]!;
  return { key: r.stdout.trimEnd(), hash, stderr: r.stderr };
}

describe('router keys create', () => {
  it('prints the key alone on stdout, warns on stderr that it is shown once, and the key works', async () => {
    const made = await created('ci', '--limit', '5', '--limit-reset', 'daily', '--expires-at', '2099-12-31');
    expect(made.key).toMatch(/^sk-rt-v1-\w+$/);
    expect(made.stderr).toContain('warning: the key is shown this once, on stdout: keep it now');
    expect(await chatWith(made.key)).toBe(0);
    const sent = t.requests().filter((r) => r.method === 'POST' && r.path === '/v1/keys').at(-1)!;
    expect(sent.body).toEqual({ name: 'ci', limit: 5, limit_reset: 'daily', expires_at: '2099-12-31T00:00:00Z' });
  });

  it('--json prints {data, key}; --jq takes the hash out', async () => {
    const r = await keys(['create', 'scripted', '--json']);
    const answer = JSON.parse(r.stdout);
    expect(answer.key).toMatch(/^sk-rt-v1-/);
    expect(answer.data).toMatchObject({ name: 'scripted', disabled: false, limit: null });
    expect((await keys(['create', 'hashed', '--jq', '.data.hash'])).stdout).toMatch(/^[0-9a-f]{64}\n$/);
  });
});

describe('router keys list and get', () => {
  it('piped: one tab-separated line per key in the columns --help names; the key itself never', async () => {
    const made = await created('listed', '--limit', '2.5');
    const r = await keys(['list']);
    expect(r.code).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith(made.hash))!;
    const cols = line.split('\t');
    expect(cols).toHaveLength(10);
    expect(cols.slice(0, 8)).toEqual([made.hash, 'listed', `${made.key.slice(0, 12)}...${made.key.slice(-4)}`, 'enabled', '2.5', '2.5', '', '0']);
    // No reset, no expiry: empty piped, as in every tab-separated listing (docs/scripting.md).
    expect(cols[8]).toBe('');
    expect(cols[9]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await keys(['list', '--help'])).stdout.replace(/\s+/g, ' ')).toContain('hash, name, label, state (enabled or disabled), limit, limit remaining, limit reset, usage (USD), expires, created');
    for (const args of [['list'], ['list', '--json'], ['get', made.hash], ['get', made.hash, '--json']]) expect((await keys(args)).stdout).not.toContain(made.key);
    // get: the same line as list's.
    expect((await keys(['get', made.hash])).stdout).toBe(`${line}\n`);
  });

  it('disabled keys only with --include-disabled; --offset skips', async () => {
    const made = await created('off');
    expect((await keys(['update', made.hash, '--disabled'])).code).toBe(0);
    expect((await keys(['list'])).stdout).not.toContain(made.hash);
    expect((await keys(['list', '--include-disabled'])).stdout).toContain(`${made.hash}\toff\t`);
    const all = JSON.parse((await keys(['list', '--include-disabled', '--json', 'hash'])).stdout) as { hash: string }[];
    const skipped = JSON.parse((await keys(['list', '--include-disabled', '--offset', '1', '--json', 'hash'])).stdout);
    expect(skipped).toEqual(all.slice(1));
  });

  it('on a terminal: a table with a header, and a description of one key', async () => {
    const made = await created('shown', '--limit', '4', '--limit-reset', 'monthly');
    const tty = (args: string[]) => runInProcess(['keys', ...args], { env: { ...t.env, ...mgmt, NO_COLOR: '1' }, tty: { stdout: true, stderr: true }, columns: 240 });
    const table = await tty(['list']);
    expect(table.stdout).toMatch(/^hash +name +label +state/m);
    expect(table.stdout).toContain('shown');
    expect(table.stdout).not.toContain(made.key);
    const one = (await tty(['get', made.hash])).stdout;
    expect(one).toContain(`hash        ${made.hash}\n`);
    expect(one).toContain('limit       $4.00 (resets monthly), $4.00 left\n');
    expect(one).toContain('usage       $0.00\ntoday       $0.00\nthis week   $0.00\nthis month  $0.00\n');
    expect(one).not.toContain(made.key);
  });

  it('an unknown hash is exit 5', async () => {
    expect(await keys(['get', 'f'.repeat(64)])).toMatchObject({ code: 5, stdout: '' });
  });
});

describe('router keys update and delete', () => {
  it('--disabled refuses the key, --enabled takes it back, --limit none clears the limit', async () => {
    const made = await created('toggled', '--limit', '1', '--limit-reset', 'weekly');
    expect((await keys(['update', made.hash, '--disabled'])).stdout.split('\t')[3]).toBe('disabled');
    expect(await chatWith(made.key)).toBe(3);
    const back = await keys(['update', made.hash, '--enabled', '--limit', 'none', '--limit-reset', 'none', '--name', 'renamed', '--json']);
    expect(JSON.parse(back.stdout)).toMatchObject({ name: 'renamed', disabled: false, limit: null, limit_reset: null });
    expect(await chatWith(made.key)).toBe(0);
  });

  it('delete: the key is refused from then on, and get is exit 5', async () => {
    const made = await created('doomed');
    expect(await keys(['delete', made.hash])).toMatchObject({ code: 0, stdout: '' });
    expect(await chatWith(made.key)).toBe(3);
    expect((await keys(['get', made.hash])).code).toBe(5);
  });
});

describe('what the keys routes need', () => {
  it('a standard key is refused: exit 3, the error says a management key is needed and how to set one', async () => {
    for (const args of [['list'], ['create', 'x'], ['get', 'a'.repeat(64)], ['update', 'a'.repeat(64), '--disabled'], ['delete', 'a'.repeat(64)]]) {
      const r = await keys(args, {});
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.stderr).toMatch(/^error: [\w ]+ needs a management key \(this is the standard API key\): export ROUTER_MANAGEMENT_KEY=…, or printf %s "\$KEY" \| router config set management_key\n$/);
    }
    const wrong = await keys(['list'], { ROUTER_MANAGEMENT_KEY: 'sk-rt-mgmt-not-a-key' });
    expect(wrong).toMatchObject({ code: 3, stderr: expect.stringContaining('(the management key is not valid)') });
  });

  it('keys current: the API key, or with --management the management key; none set is exit 3', async () => {
    const api = (await keys(['current'])).stdout.split('\t');
    expect(api.slice(0, 2)).toEqual([`${t.apiKey.slice(0, 12)}...${t.apiKey.slice(-4)}`, 'key']);
    expect((await keys(['current', '--management'])).stdout.split('\t')[1]).toBe('management');
    expect(JSON.parse((await keys(['current', '--management', '--json'])).stdout)).toMatchObject({ is_management_key: true });
    expect(await keys(['current', '--management'], {})).toMatchObject({ code: 3, stderr: expect.stringContaining('no management key is set') });
  });
});

describe('bad input: one line, exit 2, nothing sent', () => {
  it.each([
    [['get', 'abc'], /"abc" is not a key hash: 64 hex digits/],
    [['delete', `sk-rt-v1-${'a'.repeat(48)}`], /is not a key hash/],
    [['update', 'a'.repeat(64)], /nothing to change/],
    [['update', 'a'.repeat(64), '--disabled', '--enabled'], /--disabled and --enabled cannot be combined/],
    [['update', 'a'.repeat(64), '--limit-reset', 'hourly'], /must be daily, weekly, monthly or none/],
    [['create', 'x', '--expires-at', '2020-01-01'], /--expires-at 2020-01-01T00:00:00Z is past/],
    [['create', 'x', '--expires-at', '2099-01-01T00:00:00'], /must be in UTC: end it with Z/],
    [['create', 'x', '--expires-at', 'tomorrow'], /not a date/],
    [['create', 'x', '--limit', '-1'], /must be 0 or more/],
    [['create', 'x', '--limit', 'lots'], /not a number of USD/],
    [['create', 'x', '--limit-reset', 'daily'], /--limit-reset goes with --limit/],
    [['create', ' '], /a key needs a name that is not blank/],
    [['list', '--offset', '-1'], /must be at least 0/],
  ])('keys %j', async (args, said) => {
    const before = calls();
    const r = await keys(args as string[]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.stderr).toMatch(said);
    expect(calls()).toBe(before);
  });
});

describe('router keys list past a page', () => {
  it('lists every key, page after page; --offset gives one page from there', async () => {
    const admin = new RouterClient({ apiKey: t.managementKey, apiRoot: t.apiRoot, maxRetries: 0 });
    try {
      const before = (await admin.keys.list()).length;
      // One page (100 on router serve) and then some.
      for (let i = before; i < 130; i++) await admin.keys.create({ name: `many-${i}` });
      const total = before + Math.max(0, 130 - before);
      const r = await keys(['list']);
      expect(r.code, r.stderr).toBe(0);
      // Was: 100 lines, the first page, and nothing said of the 30 others.
      expect(r.stdout.trimEnd().split('\n')).toHaveLength(total);
      expect(JSON.parse((await keys(['list', '--json'])).stdout)).toHaveLength(total);
      expect((await keys(['list', '--offset', '0'])).stdout.trimEnd().split('\n')).toHaveLength(100);
      expect((await keys(['list', '--offset', '100'])).stdout.trimEnd().split('\n')).toHaveLength(total - 100);
    } finally {
      await admin.close();
    }
  });
});

it('keys list: a service that ignores offset (the same full page again) ends the listing, listed once', async () => {
  const page = Array.from({ length: 100 }, (_, i) => ({ hash: i.toString(16).padStart(64, '0'), name: `k${i}`, label: `sk-…${i}`, disabled: false }));
  const server = await startFixtureServer({ 'GET /api/v1/keys': { body: { data: page } } });
  try {
    const env = { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_MANAGEMENT_KEY: 'sk-test-mgmt-000000', ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '', ROUTER_NO_LOG: '1' };
    const r = await runInProcess(['--max-retries', '0', 'keys', 'list', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(100);
    expect(server.requests.map((q) => q.url)).toEqual(['/api/v1/keys', '/api/v1/keys?offset=100']);
  } finally {
    await server.close();
  }
});

describe('a create or delete whose answer is lost', () => {
  it('says the service may have carried it out, and how to tell', async () => {
    await t.admin('faults', { faults: ['lost,times=1,method=POST,path=/v1/keys'] });
    const lost = await keys(['create', 'unheard']);
    // Was: "connection … failed: other side closed", and nothing of the key the service made.
    expect(lost.code).toBe(8);
    expect(lost.stdout).toBe('');
    expect(lost.stderr).toContain('the service may have made key "unheard" all the same, its key unread: router keys list shows it');
    expect((await keys(['list'])).stdout).toContain('\tunheard\t');
    const made = await created('to-delete');
    await t.admin('faults', { faults: ['lost,times=1,method=DELETE'] });
    const gone = await keys(['delete', made.hash]);
    expect(gone.code).toBe(8);
    expect(gone.stderr).toContain(`the service may have deleted it all the same: router keys get ${made.hash} says`);
    expect((await keys(['get', made.hash])).code).toBe(5);
  });
});
