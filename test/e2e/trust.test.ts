import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';

let t: TestEnv;
let requests: string;
let batchId: string;

beforeAll(async () => {
  t = await startTestEnv();
  requests = join(t.dir, 'requests.jsonl');
  writeFileSync(requests, ['a', 'b'].map((c) => JSON.stringify({ custom_id: c, body: { model: 'local/echo', messages: [{ role: 'user', content: c }] } })).join('\n'));
  batchId = (await t.run(['batch', 'create', requests])).stdout.trim();
  expect((await t.run(['batch', 'get', batchId, '--watch', '--interval', '0.05'])).code).toBe(0);
});
afterAll(() => t.close());

const mgmt = () => ({ ROUTER_MANAGEMENT_KEY: t.managementKey });
const chatRequests = () => t.requests().filter((r) => r.method === 'POST').length;

describe('stdout on a full disk: one line on stderr, non-zero exit, for every command', () => {
  const cases: [string, () => string[]][] = [
    ['--help', () => ['--help']],
    ['--version', () => ['--version']],
    ['chat', () => ['chat', '--model', 'local/lorem', 'write 40 words']],
    ['chat --json', () => ['chat', '--json', '--model', 'local/echo', 'hi']],
    ['responses', () => ['responses', '--model', 'local/lorem', 'hi']],
    ['embed', () => ['embed', '--model', 'local/embed', 'a', 'b']],
    ['speak', () => ['speak', 'hello', '--voice', 'alloy', '--model', 'local/tts']],
    ['decide', () => ['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'q', 'is it?']],
    ['batch create', () => ['batch', 'create', requests]],
    ['batch list', () => ['batch', 'list']],
    ['batch get', () => ['batch', 'get', batchId, '--json']],
    ['batch get --results', () => ['batch', 'get', batchId, '--results']],
    ['config path', () => ['config', 'path']],
    ['completion bash', () => ['completion', 'bash']],
    ['chat --help', () => ['chat', '--help']],
  ];
  for (const [name, args] of cases) {
    it(name, async () => {
      const r = await t.run(args(), { stdoutPath: '/dev/full', env: mgmt() });
      expect(r.code).not.toBe(0);
      expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: .*disk full/)]);
    });
  }
});

describe('an id that stdout could not carry is never lost', () => {
  const latestBatch = async () => JSON.parse((await t.run(['batch', 'list', '--limit', '1', '--json'])).stdout).data[0].id as string;

  it('batch create to a full disk names the batch it made (plain, --json, --jq)', async () => {
    for (const extra of [[], ['--json'], ['--jq', '.id']]) {
      const r = await t.run(['batch', 'create', requests, ...extra], { stdoutPath: '/dev/full' });
      expect(r.code).toBe(1);
      const id = await latestBatch();
      expect(r.stderr).toBe(`error: cannot write stdout: disk full; batch ${id} was created (router batch get ${id})\n`);
    }
  });

  it('router api: what a POST made is named when its answer cannot be printed', async () => {
    const body = join(t.dir, 'api-batch.json');
    writeFileSync(body, JSON.stringify({ endpoint: '/v1/chat/completions', model: 'local/echo', requests: [{ custom_id: 'a', body: { messages: [{ role: 'user', content: 'hi' }] } }] }));
    for (const extra of [[], ['--jq', '.id'], ['-i']]) {
      const r = await t.run(['api', 'POST', '/v1/batches', '--input', body, ...extra], { stdoutPath: '/dev/full' });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`error: cannot write stdout: disk full; POST /v1/batches made batch ${await latestBatch()}\n`);
    }
  });

  it('--results never writes over the requests file, under any name: refused before anything is sent or any job made', async () => {
    const input = join(t.dir, 'own-input.jsonl');
    writeFileSync(input, readFileSync(requests));
    const link = join(t.dir, 'own-input-link.jsonl');
    symlinkSync(input, link);
    const before = t.requests().length;
    const env = { ROUTER_STATE_DIR: join(t.dir, 'own-input-state') };
    for (const target of [input, link, join(t.dir, '.', 'own-input.jsonl')]) {
      for (const args of [['batch', 'create', input, '--watch', '--results', target], ['batch', 'run', input, '--watch', '--results', target], ['batch', 'run', link, '--results', input]]) {
        const r = await t.run(args, { env });
        expect(r).toMatchObject({ code: 2, stdout: '' });
        expect(r.stderr).toMatch(/^error: --results .* is the requests file: the results would replace the requests; give another file\n$/);
      }
    }
    expect(t.requests()).toHaveLength(before);
    expect(readFileSync(input)).toEqual(readFileSync(requests));
    expect((await t.run(['batch', 'jobs'], { env })).stdout).toBe('');
  });

  it('speak -o never writes over its own input (a reference clip, the turns file), under any name', async () => {
    const mgmt = { ROUTER_MANAGEMENT_KEY: t.managementKey };
    const clip = join(t.dir, 'own-clip.mp3');
    expect((await t.run(['speak', 'hi', '--model', 'local/tts', '--voice', 'alloy', '-o', clip], { env: mgmt })).code).toBe(0);
    const kept = readFileSync(clip);
    const turns = join(t.dir, 'own-turns.mp3');
    writeFileSync(turns, JSON.stringify([{ text: 'a' }]));
    const before = t.requests().length;
    for (const args of [['speak', 'hi', '--reference-audio', clip, '-o', join(t.dir, '.', 'own-clip.mp3')], ['speak', '--turns', turns, '-o', turns]]) {
      const r = await t.run([...args, '--model', 'local/tts', '--voice', 'alloy'], { env: mgmt });
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^error: -o .* is the input file .*: the output would replace it; give another file\n$/);
    }
    expect(t.requests()).toHaveLength(before);
    expect(readFileSync(clip)).toEqual(kept);
  });

  it('batch create into a pipe closed early says the id on stderr, exit 0', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [BIN, 'batch', 'create', requests], { env: { ...process.env, ...t.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone before the id is written
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.on('close', resolve));
    const id = await latestBatch();
    expect(code).toBe(0);
    expect(stderr).toBe(`batch ${id} was created (router batch get ${id})\n`);
  });

  it('batch run to a full disk names the job it started', async () => {
    const r = await t.run(['batch', 'run', requests, '--new'], { stdoutPath: '/dev/full' });
    expect(r.code).toBe(1);
    const id = /job (\S+) was started/.exec(r.stderr)?.[1];
    expect(id).toBeDefined();
    expect(r.stderr).toBe(`error: cannot write stdout: disk full; job ${id} was started (router batch job ${id}; router batch run --resume ${id} --watch)\n`);
    expect((await t.run(['batch', 'job', id!, '--json'])).code).toBe(0);
  });
});

describe('bad output paths: one line, exit 2, nothing sent', () => {
  it('speak -o into a missing folder, onto a folder, with an extension the service does not produce', async () => {
    const before = chatRequests();
    const missing = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'nope', 'a.mp3')], { env: mgmt() });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: cannot write .*nope\/a\.mp3: folder .* does not exist\n$/);
    const folder = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', t.dir], { env: mgmt() });
    expect(folder.code).toBe(2);
    expect(folder.stderr).toMatch(/is a folder/);
    const wav = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'a.wav')], { env: mgmt() });
    expect(wav.code).toBe(2);
    expect(wav.stderr).toMatch(/produces mp3 or pcm/);
    expect(chatRequests()).toBe(before);
  });

  it('--results naming a folder or a missing folder, before the batch is created', async () => {
    const before = chatRequests();
    for (const target of [t.dir, join(t.dir, 'missing', 'out.jsonl')]) {
      const r = await t.run(['batch', 'create', requests, '--watch', '--results', target]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      const g = await t.run(['batch', 'get', batchId, '--results', target]);
      expect(g.code).toBe(2);
    }
    expect(chatRequests()).toBe(before);
  });

  it('an empty path, or one ending in / (a folder to be): one line each, exit 2, nothing sent', async () => {
    const before = chatRequests();
    const speak = (o: string) => t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', o], { env: mgmt() });
    expect(await speak('')).toMatchObject({ code: 2, stderr: 'error: cannot write to an empty path: give a file name\n' });
    expect(await speak('new-folder/')).toMatchObject({ code: 2, stderr: 'error: cannot write new-folder/: it ends in / as a folder does; give a file name\n' });
    expect(await t.run(['batch', 'get', batchId, '--results', 'out/'])).toMatchObject({ code: 2, stderr: 'error: cannot write out/: it ends in / as a folder does; give a file name\n' });
    expect(await t.run(['embed', '--file', '', '--model', 'local/embed'])).toMatchObject({ code: 2, stderr: 'error: --file: the path is empty\n' });
    expect(await t.run(['batch', 'create', ''])).toMatchObject({ code: 2, stderr: 'error: the requests file name is empty\n' });
    expect(await t.run(['batch', 'create', join(requests, 'x.jsonl')])).toMatchObject({ code: 2, stderr: `error: cannot read ${requests}/x.jsonl: a part of the path is not a folder\n` });
    expect(chatRequests()).toBe(before);
  });

  it('a device is written, never replaced; a pcm extension asks for pcm', async () => {
    const r = await t.run(['batch', 'get', batchId, '--results', '/dev/null']);
    expect(r.code).toBe(0);
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
    const pcm = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'a.pcm')], { env: mgmt() });
    expect(pcm.code).toBe(0);
    expect(t.requests().at(-1)!.body.response_format).toBe('pcm');
  });

  it('temp files a killed run left behind are swept by the next run to that folder', async () => {
    const dir = join(t.dir, 'sweep');
    mkdirSync(dir);
    writeFileSync(join(dir, '.router-tmp-out.jsonl.999999.abcdef'), 'half');
    const r = await t.run(['batch', 'get', batchId, '--results', join(dir, 'out.jsonl')]);
    expect(r.code).toBe(0);
    expect(readdirSync(dir)).toEqual(['out.jsonl']);
  });
});

describe('the stdin spool of batch create -', () => {
  it('is removed after the run, and a killed run\'s spool is swept by the next', async () => {
    const { tmpdir } = await import('node:os');
    const stale = join(tmpdir(), 'router-batch-stdin-999999-abcdef');
    mkdirSync(stale, { recursive: true });
    writeFileSync(join(stale, 'stdin.jsonl'), 'half');
    const r = await t.run(['batch', 'create', '-'], { input: readFileSync(requests) });
    expect(r.code).toBe(0);
    expect(existsSync(stale)).toBe(false);
  });
});

describe('serve refuses what it cannot use, in words', () => {
  it('a port in use, a state path that is a file', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const busy = await t.run(['serve', '--port', String(port), '--state', join(t.dir, 'st')]);
    blocker.close();
    expect(busy.code).not.toBe(0);
    expect(busy.stderr).toBe(`error: port ${port} is in use: try another --port, or --port 0 for any free one\n`);
    const file = join(t.dir, 'state-file');
    writeFileSync(file, '');
    const bad = await t.run(['serve', '--port', '0', '--state', file]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--state .* is a file, not a folder/);
    expect(await t.run(['serve', '--port', '0', '--state', ''])).toMatchObject({ code: 2, stderr: 'error: --state: the path is empty\n' });
  });

  it('a host that is no address of this machine, or blank, is one line and exit 2 (no warning first); an IPv6 host gives a root that works', async () => {
    const state = join(t.dir, 'st-host');
    const cases: [string, string][] = [
      ['NaN', 'error: --host NaN: no such host name or address'],
      ['no-such-host.invalid', 'error: --host no-such-host.invalid: no such host name or address'],
      ['10.9.9.9', 'error: --host 10.9.9.9: not an address of this machine'],
      ['', 'error: --host: the address is empty (127.0.0.1 is the default)'],
      [' ', 'error: --host: the address is empty (127.0.0.1 is the default)'],
    ];
    for (const [host, line] of cases) expect(await t.run(['serve', '--port', '0', '--host', host, '--state', state])).toMatchObject({ code: 2, stdout: '', stderr: `${line}\n` });
    const serve = t.spawn(['serve', '--port', '0', '--host', '::1', '--state', state, '--json']);
    try {
      const info = JSON.parse(await new Promise<string>((r) => serve.stdout!.once('data', (c) => r(String(c)))));
      expect(info.api_root).toMatch(/^http:\/\/\[::1\]:\d+\/api$/);
      expect(await t.run(['chat', '--model', 'local/echo', 'over v6'], { env: { ROUTER_API_ROOT: info.api_root, ROUTER_API_KEY: info.api_key } })).toMatchObject({ code: 0, stdout: 'over v6\n' });
    } finally {
      serve.kill('SIGTERM');
    }
  });
});

describe('typos and unknown names', () => {
  it('keeps "Did you mean" on one line and says where to look; help for an unknown command is exit 2', async () => {
    const cmd = await t.run(['chta', 'hi']);
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toBe(`error: unknown command 'chta' (Did you mean chat?); see "router --help"\n`);
    const flag = await t.run(['chat', '--modle', 'x', 'hi']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe(`error: unknown option '--modle' (Did you mean --model?); see "router chat --help"\n`);
    const help = await t.run(['help', 'nope']);
    expect(help.code).toBe(2);
    expect(help.stdout).toBe('');
    expect((await t.run(['help', 'chta'])).stderr).toBe(`error: unknown command 'chta' (Did you mean chat?); see "router --help"\n`);
  });

  it('a mistyped value of a closed set names the one it most likely meant, before anything is sent', async () => {
    expect((await t.run(['config', 'set', 'model', 'local/echo', '--profile', 'local'])).code).toBe(0);
    t.clearRequests();
    const cases: [string[], string, number][] = [
      [['usage', '--by', 'modle'], `error: option '--by <key>' argument 'modle' is invalid: allowed choices are day, model, command, profile (Did you mean model?); see "router usage --help"`, 2],
      [['batch', 'list', '--status', 'complete'], `error: option '--status <status>' argument 'complete' is invalid: allowed: validating, in_progress, completed, failed, expired, cancelled (Did you mean completed?); see "router batch list --help"`, 2],
      [['completion', 'bsh'], `error: argument 'shell' value 'bsh' is invalid: allowed choices are bash, zsh, fish (Did you mean bash?); see "router completion --help"`, 2],
      [['batch', 'create', requests, '--endpoint', '/v1/chat/completion'], `error: option '--endpoint <path>' argument '/v1/chat/completion' is invalid: allowed choices are /v1/chat/completions, /v1/responses, /v1/messages, /v1/embeddings (Did you mean /v1/chat/completions?); see "router batch create --help"`, 2],
      [['config', 'get', 'api_kye'], 'error: unknown setting "api_kye" (Did you mean api_key?): use one of api_key, management_key, api_root, model, voice, speech_model, embed_model, log, daily_budget, monthly_budget', 2],
      [['config', 'use', 'locla'], 'error: no profile "locla" (Did you mean local?); see router config list', 5],
      [['batch', 'list', '--json', 'stauts'], 'error: unknown JSON field "stauts" (Did you mean status?); fields of "batch list": id, object, endpoint, model, completion_window, created_at, finalized_at, status, request_counts, error, results, usage', 2],
      [['api', '-X', 'PSOT', '/v1/models'], 'error: -X PSOT (Did you mean POST?): use one of GET, POST, PUT, PATCH, DELETE', 2],
    ];
    for (const [args, line, code] of cases) expect(await t.run(args)).toMatchObject({ code, stdout: '', stderr: `${line}\n` });
    // Nothing close: no guess.
    expect((await t.run(['usage', '--by', 'xyz'])).stderr).not.toMatch(/Did you mean/);
    expect((await t.run(['config', 'get', 'zzzzzz'])).stderr).toBe('error: unknown setting "zzzzzz": use one of api_key, management_key, api_root, model, voice, speech_model, embed_model, log, daily_budget, monthly_budget\n');
    expect((await t.run(['--profile', 'locla', 'chat', 'hi'])).stderr).toBe('error: no profile "locla" (Did you mean local?)\n');
    expect(t.requests()).toHaveLength(0);
  });

  it('a malformed API root is a usage error everywhere; an unknown profile is an error even with env keys', async () => {
    for (const root of ['127.0.0.1:8080/api', 'ftp://host/api']) {
      const flag = await t.run(['--api-root', root, 'chat', 'hi']);
      expect(flag.code).toBe(2);
      const env = await t.run(['batch', 'list'], { env: { ROUTER_API_ROOT: root } });
      expect(env.code).toBe(2);
      expect(env.stderr).toMatch(/ROUTER_API_ROOT must be an http\(s\) URL/);
    }
    const p = await t.run(['--profile', 'nope', 'chat', 'hi']);
    expect(p.code).toBe(2);
    expect(p.stderr).toMatch(/no profile "nope"/);
  });

  it('a user name or password in an API root is refused and never shown, wherever the root comes from', async () => {
    const secret = 'sk-pass-in-url-42';
    const withCreds = t.apiRoot.replace('http://', `http://me:${secret}@`);
    const env = { ROUTER_CONFIG_DIR: join(t.dir, 'userinfo') };
    const before = t.requests().length;
    const said = [
      await t.run(['--api-root', withCreds, 'chat', 'hi'], { env }),
      await t.run(['chat', 'hi'], { env: { ...env, ROUTER_API_ROOT: withCreds } }),
      await t.run(['--api-root', `ftp://me:${secret}@host/api`, 'chat', 'hi'], { env }),
      await t.run(['--api-root', `http://me:${secret}@[bad/api`, 'chat', 'hi'], { env }),
      await t.run(['config', 'set', 'api_root', withCreds], { env }),
      await t.run(['login', '--with-key', '--no-verify', '--api-root', withCreds], { env, input: t.apiKey }),
    ];
    for (const r of said) {
      expect(r.code).toBe(2);
      expect(r.stdout + r.stderr).not.toContain(secret);
      expect(r.stderr).toMatch(/^error: .*\*\*\*@/);
    }
    expect(said[0]!.stderr).toMatch(/--api-root must not hold a user name or password/);
    // One stored by an older version is not shown either.
    mkdirSync(env.ROUTER_CONFIG_DIR, { recursive: true });
    writeFileSync(join(env.ROUTER_CONFIG_DIR, 'config.json'), JSON.stringify({ current: 'default', profiles: { default: { api_root: withCreds } } }));
    for (const args of [['config', 'list'], ['config', 'list', '--json'], ['config', 'get', 'api_root']]) {
      const r = await t.run(args, { env });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('***@127.0.0.1');
      expect(r.stdout + r.stderr).not.toContain(secret);
    }
    expect(t.requests()).toHaveLength(before);
  });

  it('a blank path (empty or spaces) is refused before any request; a blank ROUTER_CONFIG_DIR or ROUTER_STATE_DIR is unset', async () => {
    const cwd = join(t.dir, 'blank-cwd');
    const home = join(t.dir, 'blank-home');
    mkdirSync(cwd);
    const before = t.requests().length;
    const key = { ROUTER_MANAGEMENT_KEY: t.managementKey };
    const cases: [string[], string][] = [
      [['speak', 'hi', '--model', 'local/tts', '--voice', 'alloy', '-o', ' '], 'error: cannot write to an empty path: give a file name'],
      [['batch', 'create', '  ', '--model', 'local/echo'], 'error: the requests file name is empty'],
      [['batch', 'run', ' ', '--model', 'local/echo'], 'error: the requests file name is empty'],
      [['embed', '--model', 'local/embed', '--file', ' '], 'error: --file: the path is empty'],
      [['serve', '--port', '0', '--state', ' '], 'error: --state: the path is empty'],
    ];
    for (const [args, line] of cases) expect(await t.run(args, { cwd, env: key })).toMatchObject({ code: 2, stdout: '', stderr: `${line}\n` });
    expect(t.requests()).toHaveLength(before);

    const env = { HOME: home, XDG_CONFIG_HOME: '', XDG_STATE_HOME: '', ROUTER_NO_LOG: '' };
    for (const dir of ['', ' ']) {
      const path = await t.run(['config', 'path'], { cwd, env: { ...env, ROUTER_CONFIG_DIR: dir } });
      expect(path.stdout).toBe(`${join(home, '.config', 'router', 'config.json')}\n`);
      expect(await t.run(['chat', '--model', 'local/echo', 'hi'], { cwd, env: { ...env, ROUTER_STATE_DIR: dir } })).toMatchObject({ code: 0, stdout: 'hi\n' });
    }
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(join(home, '.local', 'state', 'router'))).toBe(true);
  });

  it('a key with a character no key has is refused in words before any request; a blank one is no key; spaces around one are dropped', async () => {
    const before = t.requests().length;
    const bad = [`${t.apiKey}\nX-Injected: 1`, 'sk-clé-1234567890', `sk-${'\t'}tab-1234567890`];
    for (const key of bad) {
      for (const env of [{ ROUTER_API_KEY: key }, { ROUTER_MANAGEMENT_KEY: key }]) {
        const r = await t.run(['chat', '--model', 'local/echo', 'hi'], { env });
        expect(r).toMatchObject({ code: 2, stdout: '' });
        expect(r.stderr).toMatch(/^error: ROUTER_(API|MANAGEMENT)_KEY holds a character no key has .*\n$/);
        expect(r.stderr).not.toContain('1234567890');
      }
      const set = await t.run(['config', 'set', 'api_key'], { input: key });
      expect(set.code).toBe(2);
    }
    expect(t.requests()).toHaveLength(before);
    expect(await t.run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_API_KEY: '  ' } })).toMatchObject({ code: 3, stderr: expect.stringMatching(/no API key/) });
    expect(await t.run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_API_KEY: ` ${t.apiKey} ` } })).toMatchObject({ code: 0, stdout: 'hi\n' });
  });

  it('an error quoting input stays one line: control characters escaped (no terminal escapes), a long quote cut', async () => {
    const odd = await t.run(['batch', 'get', 'a\nb\u001b[31mred\r']);
    expect(odd).toMatchObject({ code: 5, stdout: '', stderr: 'error: no batch a\\nb\\u001b[31mred\\r in this workspace\n' });
    const long = await t.run(['batch', 'get', 'b'.repeat(3000)]);
    expect(long.code).toBe(5);
    expect(long.stderr).toBe(`error: no batch ${'b'.repeat(1000 - 'no batch '.length)}…\n`);
    // A file's problems are still one line each.
    const file = join(t.dir, 'two-problems.jsonl');
    writeFileSync(file, '{"x":1}\nnot json\n');
    const scan = await t.run(['batch', 'create', file, '--model', 'local/echo']);
    expect(scan.code).toBe(2);
    expect(scan.stderr.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^error: .*two-problems\.jsonl:1: missing custom_id$/),
      expect.stringMatching(/^error: .*two-problems\.jsonl:1: missing body$/),
      expect.stringMatching(/^error: .*two-problems\.jsonl:2: not JSON/),
    ]);
  });

  it('a corrupt config file: names the file and position, never echoes its contents', async () => {
    const dir = join(t.dir, 'corrupt');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), '{"profiles": {"x": {"api_key": "sk-secret-fragment-123"}');
    const r = await t.run(['config', 'list'], { env: { ROUTER_CONFIG_DIR: dir } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config\.json is not valid JSON/);
    expect(r.stderr).not.toMatch(/secret-fragment/);
  });
});

describe('onboarding as written', () => {
  it('login checks the key first; config set refuses a key as an argument', async () => {
    const cfg = { ROUTER_CONFIG_DIR: join(t.dir, 'login-cfg'), ROUTER_API_KEY: '', ROUTER_API_ROOT: '' };
    const wrong = await t.run(['login', '--with-key', '--api-root', t.apiRoot], { input: 'sk-rt-v1-wrongwrongwrong', env: cfg });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toMatch(/refused the key \(401\): nothing saved/);
    const empty = await t.run(['login', '--with-key', '--api-root', t.apiRoot], { input: '', env: cfg });
    expect(empty.code).toBe(2);
    const ok = await t.run(['login', '--with-key', '--api-root', t.apiRoot], { input: t.apiKey, env: cfg });
    expect(ok.code).toBe(0);
    expect((await t.run(['chat', '--model', 'local/echo', 'saved'], { env: cfg })).stdout).toBe('saved\n');
    const arg = await t.run(['config', 'set', 'api_key', 'sk-rt-v1-onthecommandline'], { env: cfg });
    expect(arg.code).toBe(2);
    expect(arg.stderr).toMatch(/not taken as an argument/);
  });

  it('serve prints both keys with a line to paste; a 403 on speech says how to set the management key', async () => {
    const r = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts'], { env: { ROUTER_MANAGEMENT_KEY: '' } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/ROUTER_MANAGEMENT_KEY/);
  });

  it('a folder as stdin is named as such, not taken for no input; nothing is sent', async () => {
    t.clearRequests();
    for (const args of [['chat', '--model', 'local/echo'], ['embed', '--model', 'local/embed'], ['speak', '--voice', 'alloy', '--model', 'local/tts'], ['batch', 'create', '-']]) {
      const r = await t.run(args, { stdinPath: t.dir, env: mgmt() });
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: cannot read stdin: it is a folder\n' });
    }
    expect(t.requests()).toHaveLength(0);
  });

  it('text that is not UTF-8 (binary, UTF-16) is refused, from stdin or a file; nothing is sent', async () => {
    const utf16 = Buffer.from('\ufeffhi there', 'utf16le');
    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00]);
    const binFile = join(t.dir, 'image.png');
    const utf16File = join(t.dir, 'notes16.txt');
    writeFileSync(binFile, binary);
    writeFileSync(utf16File, utf16);
    t.clearRequests();
    const piped: string[][] = [['chat', '--model', 'local/echo'], ['chat', '--model', 'local/echo', 'describe'], ['responses', '--model', 'local/echo'], ['embed', '--model', 'local/embed'], ['speak', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'x.mp3')]];
    for (const args of piped) {
      const r = await t.run(args, { input: binary, env: mgmt() });
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: stdin is not UTF-8 text\n' });
    }
    const u = await t.run(['chat', '--model', 'local/echo'], { input: utf16 });
    expect(u.stderr).toBe('error: stdin is not UTF-8 text (it is UTF-16: convert it with iconv -f UTF-16 -t UTF-8)\n');
    const files: [string[], string][] = [
      [['embed', '--model', 'local/embed', '--file', utf16File], `--file: ${utf16File}`],
      [['decide', '--model', 'local/judge', '--state', binFile, '--noul', 'spam', 'q'], `--state: ${binFile}`],
      [['responses', '--model', 'local/echo', '--input', binFile], `--input: ${binFile}`],
      [['api', 'POST', '/v1/chat/completions', '-F', `messages[][content]=@${binFile}`], `-F: ${binFile}`],
    ];
    for (const [args, what] of files) {
      const r = await t.run(args, { env: mgmt() });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^error: ${what.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not UTF-8 text`));
    }
    expect(t.requests()).toHaveLength(0);
    // A UTF-8 byte-order mark is no reason to refuse, and is not sent.
    const bom = await t.run(['chat', '--model', 'local/echo'], { input: Buffer.from('\ufeffhello', 'utf8') });
    expect(bom).toMatchObject({ code: 0, stdout: 'hello\n' });
    // A raw body is bytes: `api --input -` sends them, and the service answers.
    const raw = await t.run(['api', 'POST', '/v1/chat/completions', '--input', '-'], { input: binary });
    expect(raw).toMatchObject({ code: 2, stderr: 'error: HTTP 400: request body is not valid JSON\n' });
  });

  it('piped stdin and a prompt go together: stdin first, then the prompt (chat, responses, decide)', async () => {
    const chat = await t.run(['chat', '--model', 'local/echo', 'summarize'], { input: 'the notes\n' });
    expect(chat.stdout).toBe('the notes\n\nsummarize\n');
    t.clearRequests();
    const resp = await t.run(['responses', '--model', 'local/echo', 'summarize'], { input: 'the notes' });
    expect(resp.code).toBe(0);
    expect(JSON.stringify(t.requests()[0]!.body.input)).toContain('the notes\\n\\nsummarize');
    t.clearRequests();
    const dec = await t.run(['decide', '--model', 'local/judge', '--noul', 'spam', 'Is this spam?'], { input: 'buy now', env: mgmt() });
    expect(dec.code).toBe(0);
    expect(t.requests()[0]!.body.state).toBe('buy now');
  });
});

describe('--watch and batch ids', () => {
  it('a watch rides out the emulator going down and coming back, then writes the results', async () => {
    const s = await startTestEnv({ batchDelayMs: 150 });
    try {
      const file = join(s.dir, 'r.jsonl');
      writeFileSync(file, Array.from({ length: 12 }, (_, i) => JSON.stringify({ custom_id: `k${i}`, body: { model: 'local/echo', messages: [{ role: 'user', content: `m${i}` }] } })).join('\n'));
      const out = join(s.dir, 'out.jsonl');
      const child = s.spawn(['batch', 'create', file, '--watch', '--interval', '0.1', '--results', out, '--max-retries', '0']);
      let stderr = '';
      child.stderr!.on('data', (c) => (stderr += c));
      const exited = new Promise<number | null>((r) => child.on('close', r));
      // Down while it watches (the create answered): on a loaded machine that can take a while.
      for (let i = 0; i < 200 && !/created batch_/.test(stderr); i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300));
      await s.restart({ downMs: 1500 });
      expect(await exited).toBe(0);
      expect(stderr).toMatch(/created batch_\w+/);
      // Dozens of polls, a reconnect: no MaxListenersExceededWarning, no stack.
      expect(stderr).not.toMatch(/Warning|\n\s+at /);
      expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(12);
    } finally {
      await s.close();
    }
  });

  it('an unreadable 202 on create: the batch is found in the listing, its id printed, nothing sent twice', async () => {
    await t.admin('faults', { faults: ['malformed,times=1,path=/v1/batches,method=POST'] });
    t.clearRequests();
    const r = await t.run(['--verbose', 'batch', 'create', requests]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/the answer to the upload could not be read \(server sent malformed JSON.*\); found its batch in the listing: batch_\w+/);
    const posts = t.requests().filter((q) => q.path === '/v1/batches' && q.method === 'POST');
    expect(posts).toHaveLength(1);
    expect(r.stdout).toMatch(/^batch_\w+\n$/);
  });

  it('an unreadable 202 with the listing down too: the batch may exist, and the CLI says how to check (exit 7)', async () => {
    await t.admin('faults', { faults: ['malformed,times=1,path=/v1/batches,method=POST', '503,path=/v1/batches,method=GET'] });
    const r = await t.run(['--max-retries', '0', 'batch', 'create', requests]);
    await t.admin('faults', { faults: [] });
    expect(r.code).toBe(7);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: the answer to the upload could not be read \(.+\); the batch may exist\. Check with: router batch list( --created-after \d+)?\n$/);
  });

  it('serve on an address other than loopback warns that it is no secure server', async () => {
    const child = t.spawn(['serve', '--port', '0', '--host', '0.0.0.0', '--state', join(t.dir, 'open-state')]);
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    await new Promise((r) => child.stdout!.once('data', r));
    child.kill('SIGTERM');
    await new Promise((r) => child.on('close', r));
    expect(stderr).toMatch(/warning: listening on 0\.0\.0\.0: the emulator is a test double, not a secure server/);
  });

  it('--exit-status: a failed batch exits 9 even when it ended before the call', async () => {
    const bad = join(t.dir, 'bad-model.jsonl');
    writeFileSync(bad, JSON.stringify({ custom_id: 'x', body: { model: 'local/echo', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] } }));
    const id = (await t.run(['batch', 'create', bad])).stdout.trim();
    const w = await t.run(['batch', 'get', id, '--watch', '--interval', '0.05']);
    expect(w.code).toBe(9);
    expect((await t.run(['batch', 'get', id])).code).toBe(0);
    expect((await t.run(['batch', 'get', id, '--exit-status'])).code).toBe(9);
    expect((await t.run(['batch', 'get', batchId, '--exit-status'])).code).toBe(0);
  });

  it('piped batch output follows one rule: a TSV line per batch', async () => {
    const get = (await t.run(['batch', 'get', batchId])).stdout;
    const list = (await t.run(['batch', 'list', '--limit', '100'])).stdout;
    expect(get.split('\t')).toHaveLength(6);
    expect(list.split('\n')).toContain(get.trim());
  });
});

describe('state and config folders that cannot be made', () => {
  it('a chat whose turn cannot be kept still succeeds: the answer, exit 0, a warning only when asked for', async () => {
    const env = { ROUTER_STATE_DIR: join(requests, 'router') }; // under a file: nothing can be made there
    const plain = await t.run(['chat', '--model', 'local/echo', 'hi'], { env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toBe('hi\n');
    expect(plain.stderr).toBe('');
    const named = await t.run(['chat', '--conversation', 'kept', '--model', 'local/echo', 'hi'], { env });
    expect(named.code).toBe(0);
    expect(named.stdout).toBe('hi\n');
    expect(named.stderr).toMatch(/^warning: this turn was not kept in conversation kept \(cannot use .+: a part of the path is not a folder\)\n$/);
  });

  it('with logging off, -c or --conversation says the turn was not kept; a plain chat says nothing', async () => {
    const env = { ROUTER_STATE_DIR: join(t.dir, 'nolog-state') };
    expect((await t.run(['chat', '--model', 'local/echo', 'first'], { env })).code).toBe(0);
    const off = "(logging is off: --no-log, ROUTER_NO_LOG or the profile's log setting)";
    const c = await t.run(['chat', '-c', 'again'], { env: { ...env, ROUTER_NO_LOG: '1' } });
    expect(c).toMatchObject({ code: 0, stdout: 'again\n' });
    expect(c.stderr).toMatch(new RegExp(`^warning: this turn was not kept in conversation c_\\w+ ${off.replace(/[()]/g, '\\$&')}\n$`));
    const named = await t.run(['chat', '--no-log', '--conversation', 'trip', '--model', 'local/echo', 'x'], { env });
    expect(named).toMatchObject({ code: 0, stdout: 'x\n', stderr: `warning: this turn was not kept in conversation trip ${off}\n` });
    expect((await t.run(['chat', '--no-log', '--model', 'local/echo', 'x'], { env })).stderr).toBe('');
    // Nothing was kept: the conversation still holds the first turn only.
    const shown = JSON.parse((await t.run(['conversations', 'show', '--json', (/c_\w+/.exec(c.stderr) ?? [''])[0]], { env })).stdout);
    expect(shown.messages.map((m: { content: string }) => m.content)).toEqual(['first', 'first']);
  });

  it('a config folder that is a file, a config file that is a folder: in words, exit 2', async () => {
    const asFile = await t.run(['config', 'list'], { env: { ROUTER_CONFIG_DIR: requests } });
    expect(asFile).toMatchObject({ code: 2, stderr: `error: cannot create the config folder ${requests}: it is a file, not a folder\n` });
    const chat = await t.run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_CONFIG_DIR: requests } });
    expect(chat).toMatchObject({ code: 2, stderr: `error: cannot read ${requests}/config.json: a part of the path is not a folder\n` });
    const folder = join(t.dir, 'cfg-folder');
    mkdirSync(join(folder, 'config.json'), { recursive: true });
    const asFolder = await t.run(['config', 'list'], { env: { ROUTER_CONFIG_DIR: folder } });
    expect(asFolder).toMatchObject({ code: 2, stderr: `error: cannot read ${folder}/config.json: is a folder\n` });
  });

  // Node's own recursive mkdir spins forever under /proc; each of these used to hang.
  it.skipIf(!existsSync('/proc/self'))('folders under /proc: one line each, at once', async () => {
    const config = await t.run(['config', 'set', 'model', 'local/echo'], { env: { ROUTER_CONFIG_DIR: '/proc/router-nope' } });
    expect(config.code).toBe(2);
    expect(config.stderr).toBe('error: cannot create the config folder /proc/router-nope: no such file or folder\n');
    const serve = await t.run(['serve', '--port', '0', '--state', '/proc/router-nope/state']);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toBe('error: cannot use /proc/router-nope: no such file or folder\n');
    const chat = await t.run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_STATE_DIR: '/proc/router-nope' } });
    expect(chat.code).toBe(0);
    expect(chat.stdout).toBe('hi\n');
    const run = await t.run(['batch', 'run', requests], { env: { ROUTER_STATE_DIR: '/proc/router-nope' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: cannot use \/proc\/router-nope: no such file or folder\n$/);
  });
});
