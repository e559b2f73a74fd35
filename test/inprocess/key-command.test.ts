import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// api_key_command and management_key_command (issue 45, item 11): a command of the user's whose stdout
// is the key, run through the shell when a command needs the key and only then; run for real here.
let n = 0;
const t = startedForAll(() => startCliEnv());

/** A fresh config folder whose profile "default" has these settings; ROUTER_API_KEY left out. */
async function profile(settings: Record<string, string>) {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, `config-${++n}`), ROUTER_API_KEY: '', ROUTER_MANAGEMENT_KEY: '' };
  for (const [k, v] of Object.entries(settings)) expect((await t.run(['config', 'set', k, v], { env })).code).toBe(0);
  return env;
}
const printed = (r: { stdout: string; stderr: string }) => r.stdout + r.stderr;

describe('api_key_command', () => {
  it('its stdout, trimmed, is the key sent; run only by a command that sends it; never printed', async () => {
    const count = join(t.dir, `count-${n}`);
    const keyFile = join(t.dir, `key-${n}`);
    writeFileSync(keyFile, t.apiKey);
    const env = await profile({ api_key_command: `echo run >> '${count}'; printf '  %s\\n' "$(cat '${keyFile}')"` });
    for (const args of [['config', 'list'], ['config', 'get', 'api_key_command'], ['usage'], ['auth', '--help'], ['chat', '--help']]) {
      expect((await t.run(args, { env })).code).toBe(0);
    }
    expect(existsSync(count)).toBe(false);
    t.clearRequests();
    const r = await t.run(['auth', 'status'], { env });
    expect(r.code).toBe(0);
    expect(readFileSync(count, 'utf8')).toBe('run\n');
    // The emulator accepted it (a wrong key is exit 3): the key sent is the command's.
    expect(t.requests().map((q) => q.path)).toEqual(['/v1/key']);
    expect(r.stdout).toContain(`key\tsk-rt-…${t.apiKey.slice(-4)} from api_key_command of profile "default"\nkept in\tthe output of a command, read now and kept nowhere: echo run >>`);
    expect(printed(r)).not.toContain(t.apiKey);
    const json = JSON.parse((await t.run(['auth', 'status', '--json'], { env })).stdout);
    expect(json).toMatchObject({ key_from: 'api_key_command of profile "default"', key_store: 'command' });
    expect(JSON.stringify(json)).not.toContain(t.apiKey);
    // The environment goes before the profile: the command is not run.
    expect((await t.run(['auth', 'status'], { env: { ...env, ROUTER_API_KEY: t.apiKey } })).code).toBe(0);
    expect(readFileSync(count, 'utf8')).toBe('run\nrun\n');
    // No run here kept a key in the keychain: none loaded its native binding.
    expect(Object.keys(createRequire(import.meta.url).cache).filter((m) => m.includes('@napi-rs'))).toEqual([]);
  });

  it("the command's environment holds no key of router's", async () => {
    const seen = join(t.dir, `env-${n}`);
    const env = await profile({ management_key_command: `env > '${seen}'; printf %s '${t.managementKey}'` });
    const r = await t.run(['credits'], { env: { ...env, ROUTER_API_KEY: t.apiKey, ROUTER_OPERATOR_KEY: 'sk-operator-secret-1234' } });
    expect(r.code).toBe(0);
    const vars = readFileSync(seen, 'utf8');
    expect(vars).toContain('ROUTER_CONFIG_DIR=');
    expect(vars).not.toMatch(/^ROUTER_\w*KEY/m);
    expect(vars).not.toContain(t.apiKey);
    expect(vars).not.toContain('sk-operator-secret-1234');
  });

  it('a command that fails, prints nothing or more than a key is exit 3, one line, nothing sent', async () => {
    const cases: [string, string][] = [
      ["echo 'gpg: decryption failed: No secret key' >&2; exit 2", 'error: api_key_command of profile "default" failed (exit 2): gpg: decryption failed: No secret key\n'],
      ['no-such-command-for-router-keys', 'error: api_key_command of profile "default" failed (exit 127): '],
      ['true', 'error: api_key_command of profile "default" printed nothing: its stdout must be the key\n'],
      ["printf 'sk-one\\nuser: me\\n'", 'error: api_key_command of profile "default" printed 2 lines: its stdout must be the key alone (e.g. pass show router | head -n 1)\n'],
      ["printf 'sk one'", 'error: api_key_command of profile "default" printed a character no key has (a space, a control character or a non-ASCII letter)\n'],
    ];
    for (const [command, said] of cases) {
      const env = await profile({ api_key_command: command });
      t.clearRequests();
      const r = await t.run(['chat', '-m', 'local/echo', 'hi'], { env });
      expect(r.code, command).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr.startsWith(said), r.stderr).toBe(true);
      expect(r.stderr.split('\n').length, r.stderr).toBe(2);
      expect(t.requests()).toEqual([]);
    }
  });
});

describe('a refused key', () => {
  it('is named as the output of its command', async () => {
    const env = await profile({ api_key_command: 'printf %s sk-rt-v1-notthekeynotthekey' });
    const r = await t.run(['chat', '-m', 'local/echo', 'hi'], { env });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/\(check the API key that api_key_command of profile "default" prints\)\n$/);
  });
});

describe('router auth status', () => {
  it('prints the profile, the API root and where the key is before a connection error', async () => {
    const env = { ROUTER_CONFIG_DIR: join(t.dir, `config-${++n}`), ROUTER_API_ROOT: 'http://127.0.0.1:9/api' };
    const r = await t.run(['auth', 'status'], { env });
    expect(r.code).toBe(8);
    expect(r.stdout).toBe(`profile\tdefault\napi root\thttp://127.0.0.1:9/api (ROUTER_API_ROOT)\nkey\tsk-rt-…${t.apiKey.slice(-4)} from ROUTER_API_KEY\nkept in\tthe environment (ROUTER_API_KEY)\n`);
    expect(r.stderr).toMatch(/^error: .*127\.0\.0\.1:9/);
  });

  it('says when the API root is the default, and that there is no key, before asking for nothing', async () => {
    const env = { ROUTER_CONFIG_DIR: join(t.dir, `config-${++n}`), ROUTER_API_ROOT: '', ROUTER_API_KEY: '' };
    const r = await t.run(['auth', 'status'], { env });
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^profile\tdefault\napi root\thttps:\/\/\S+ \(the default: no --api-root, ROUTER_API_ROOT or api_root of the profile\)\nkey\tnone: set ROUTER_API_KEY, or run "router login"\n$/);
  });

  it('a key in the file says so, and how to move it', async () => {
    const env = { ROUTER_CONFIG_DIR: join(t.dir, `config-${++n}`) };
    expect((await t.run(['login', '--with-key'], { env: { ...env, ROUTER_API_KEY: '' }, input: t.apiKey })).code).toBe(0);
    const r = await t.run(['auth', 'status'], { env: { ...env, ROUTER_API_KEY: '' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`kept in\tthe config file ${join(env.ROUTER_CONFIG_DIR, 'config.json')} (0600; "router auth migrate" moves it to the keychain)\nchecked\taccepted by GET /v1/key\n`);
    expect(printed(r)).not.toContain(t.apiKey);
  });
});
