import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnvWithBatch, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
let requests: string;

beforeAll(async () => {
  ({ t, requests } = await startCliEnvWithBatch());
});
afterAll(() => t.close());

describe('typos and unknown names', () => {
  it('keeps "did you mean" on one line and says where to look; help for an unknown command is exit 2', async () => {
    const cmd = await t.run(['chta', 'hi']);
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toBe(`error: unknown command 'chta' (did you mean chat?); see "router --help"\n`);
    const flag = await t.run(['chat', '--modle', 'x', 'hi']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe(`error: unknown option '--modle' (did you mean --model?); see "router chat --help"\n`);
    const help = await t.run(['help', 'nope']);
    expect(help.code).toBe(2);
    expect(help.stdout).toBe('');
    expect((await t.run(['help', 'chta'])).stderr).toBe(`error: unknown command 'chta' (did you mean chat?); see "router --help"\n`);
  });

  it("a flag another command spells otherwise, or the API's field name, names this command's, before anything is sent", async () => {
    const cases: [string[], string][] = [
      [['responses', '--max-tokens', '5', 'hi'], `error: unknown option '--max-tokens' (did you mean --max-output-tokens?); see "router responses --help"`],
      [['chat', '--max-output-tokens', '5', 'hi'], `error: unknown option '--max-output-tokens' (did you mean --max-tokens?); see "router chat --help"`],
      [['chat', '--max-completion-tokens', '5', 'hi'], `error: unknown option '--max-completion-tokens' (did you mean --max-tokens?); see "router chat --help"`],
      [['responses', '--max_completion_tokens', '5', 'hi'], `error: unknown option '--max_completion_tokens' (did you mean --max-output-tokens?); see "router responses --help"`],
      [['chat', '--instructions', 'be brief', 'hi'], `error: unknown option '--instructions' (did you mean -s/--system?); see "router chat --help"`],
      [['responses', '--response-format', 'json_object', 'hi'], `error: unknown option '--response-format' (did you mean --text-format?); see "router responses --help"`],
      [['chat', '--text-format', 'json_object', 'hi'], `error: unknown option '--text-format' (did you mean --response-format?); see "router chat --help"`],
      [['batch', 'create', requests, '--watch', '--output', 'out.jsonl'], `error: unknown option '--output' (did you mean --results?); see "router batch create --help"`],
      [['speak', '--results', 'hi.mp3', 'hi'], `error: unknown option '--results' (did you mean -o/--output?); see "router speak --help"`],
    ];
    t.clearRequests();
    for (const [args, line] of cases) expect(await t.run(args)).toMatchObject({ code: 2, stdout: '', stderr: `${line}\n` });
    // A command with no flag of that setting gets no guess.
    expect((await t.run(['embed', '--max-tokens', '5', 'hi'])).stderr).toBe(`error: unknown option '--max-tokens'; see "router embed --help"\n`);
    expect(t.requests()).toHaveLength(0);
  });

  it('a mistyped value of a closed set names the one it most likely meant, before anything is sent', async () => {
    expect((await t.run(['config', 'set', 'model', 'local/echo', '--profile', 'local'])).code).toBe(0);
    t.clearRequests();
    const cases: [string[], string, number][] = [
      [['usage', '--by', 'modle'], `error: option '--by <key>' argument 'modle' is invalid: allowed choices are day, model, command, profile (did you mean model?); see "router usage --help"`, 2],
      [['batch', 'list', '--status', 'complete'], `error: option '--status <status>' argument 'complete' is invalid: allowed: validating, in_progress, completed, failed, expired, cancelled (did you mean completed?); see "router batch list --help"`, 2],
      [['completion', 'bsh'], `error: argument 'shell' value 'bsh' is invalid: allowed choices are bash, zsh, fish (did you mean bash?); see "router completion --help"`, 2],
      [['batch', 'create', requests, '--endpoint', '/v1/chat/completion'], `error: option '--endpoint <path>' argument '/v1/chat/completion' is invalid: allowed choices are /v1/chat/completions, /v1/responses, /v1/messages, /v1/embeddings (did you mean /v1/chat/completions?); see "router batch create --help"`, 2],
      [['config', 'get', 'api_kye'], 'error: unknown setting "api_kye" (did you mean api_key?): use one of api_key, management_key, api_root, model, voice, speech_model, embed_model, log, daily_budget, monthly_budget, api_key_command, management_key_command, app_url, app_title, app_categories, batches_path, mcp', 2],
      [['config', 'use', 'locla'], 'error: no profile "locla" (did you mean local?); see router config list', 5],
      [['batch', 'list', '--json', 'stauts'], 'error: unknown JSON field "stauts" (did you mean status?); fields of "batch list": id, object, endpoint, model, completion_window, created_at, finalized_at, status, request_counts, error, results, usage', 2],
      [['api', '-X', 'PSOT', '/v1/models'], 'error: -X PSOT (did you mean POST?): use one of GET, POST, PUT, PATCH, DELETE', 2],
    ];
    for (const [args, line, code] of cases) expect(await t.run(args)).toMatchObject({ code, stdout: '', stderr: `${line}\n` });
    // Nothing close: no guess.
    expect((await t.run(['usage', '--by', 'xyz'])).stderr).not.toMatch(/did you mean/);
    expect((await t.run(['config', 'get', 'zzzzzz'])).stderr).toBe('error: unknown setting "zzzzzz": use one of api_key, management_key, api_root, model, voice, speech_model, embed_model, log, daily_budget, monthly_budget, api_key_command, management_key_command, app_url, app_title, app_categories, batches_path, mcp\n');
    expect((await t.run(['--profile', 'locla', 'chat', 'hi'])).stderr).toBe('error: no profile "locla" (did you mean local?)\n');
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
      // A password with a #, / or ? not percent-encoded makes no URL: still not shown.
      ...(await Promise.all(['#', '/', '?'].map((c) => t.run(['chat', 'hi'], { env: { ...env, ROUTER_API_ROOT: withCreds.replace(secret, `${c}${secret}`) } })))),
      await t.run(['chat', 'hi'], { env: { ...env, HTTPS_PROXY: `http://me:#${secret}@proxy.example:3128`, ROUTER_API_ROOT: 'https://example.com/api' } }),
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
    // So is one in an MCP server's URL (each line of mcp).
    writeFileSync(join(env.ROUTER_CONFIG_DIR, 'config.json'), JSON.stringify({ current: 'default', profiles: { default: { api_root: withCreds, mcp: `npx some-server\nhttps://me:${secret}@mcp.example/mcp` } } }));
    for (const args of [['config', 'list'], ['config', 'list', '--json'], ['config', 'get', 'api_root'], ['config', 'get', 'mcp']]) {
      const r = await t.run(args, { env });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(args[2] === 'mcp' ? 'npx some-server\nhttps://***@mcp.example/mcp' : '***@127.0.0.1');
      expect(r.stdout + r.stderr).not.toContain(secret);
    }
    expect(t.requests()).toHaveLength(before);
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
    expect(odd).toMatchObject({ code: 5, stdout: '' });
    expect(odd.stderr).toMatch(/^error: no batch a\\nb\\u001b\[31mred\\r in this workspace \(asked GET http:\/\/[^\s]+\/batches\/a%0Ab%1B%5B31mred%0D( and [^\s]+)?\)\n$/);
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
    // A damaged store file is exit 1, as every store's (docs/reliability.md).
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/config\.json is not valid JSON/);
    expect(r.stderr).not.toMatch(/secret-fragment/);
  });
});
