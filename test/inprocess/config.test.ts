import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { runInProcess } from '../support/inprocess.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv());

describe('profiles', () => {
  it('login --with-key stores the key privately and never prints it', async () => {
    const env = { ROUTER_API_KEY: '', ROUTER_API_ROOT: '' };
    const login = await t.run(['login', '--with-key', '--profile', 'local', '--api-root', t.apiRoot], { input: `${t.apiKey}\n`, env });
    expect(login.code).toBe(0);
    expect(login.stdout + login.stderr).not.toContain(t.apiKey);
    const path = (await t.run(['config', 'path'], { env })).stdout.trim();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    expect(readFileSync(path, 'utf8')).toContain(t.apiKey);

    const list = await t.run(['config', 'list', '--json'], { env });
    expect(list.stdout).not.toContain(t.apiKey);
    const parsed = JSON.parse(list.stdout);
    expect(parsed.current).toBe('local');
    expect(parsed.profiles[0].api_key).toBe(`${t.apiKey.slice(0, 6)}…${t.apiKey.slice(-4)}`);
    // Every setting a profile can hold is listed, the budgets and the ledger switch too.
    for (const [field, value] of [['daily_budget', '2'], ['monthly_budget', '10'], ['log', 'off']]) expect((await t.run(['config', 'set', field!, value!, '--profile', 'local'], { env })).code).toBe(0);
    const listed = JSON.parse((await t.run(['config', 'list', '--json'], { env })).stdout).profiles[0];
    expect(Object.keys(listed)).toEqual(['name', 'current', 'api_key', 'management_key', 'api_root', 'model', 'voice', 'speech_model', 'embed_model', 'log', 'daily_budget', 'monthly_budget', 'api_key_command', 'management_key_command', 'app_url', 'app_title', 'app_categories', 'batches_path', 'mcp', 'api_key_in', 'management_key_in']);
    expect(listed).toMatchObject({ daily_budget: '2', monthly_budget: '10', log: 'off', management_key: null, api_key_in: 'file', management_key_in: null });
    for (const field of ['daily_budget', 'monthly_budget', 'log']) await t.run(['config', 'unset', field, '--profile', 'local'], { env });
    const get = await t.run(['config', 'get', 'api_key', '--profile', 'local'], { env });
    expect(get.stdout.trim()).toBe(`${t.apiKey.slice(0, 6)}…${t.apiKey.slice(-4)}`);

    const chat = await t.run(['chat', '--model', 'local/echo', 'via profile'], { env });
    expect(chat.code).toBe(0);
    expect(chat.stdout).toBe('via profile\n');
  });

  it('precedence: flags > env > profile', async () => {
    const env = { ROUTER_API_KEY: '', ROUTER_API_ROOT: '' };
    await t.run(['login', '--with-key', '--no-verify', '--profile', 'broken', '--api-root', 'http://127.0.0.1:9/api'], { input: t.apiKey, env });
    await t.run(['config', 'set', 'model', 'local/lorem', '--profile', 'broken'], { env });
    // The profile's root is unreachable: exit 8.
    const viaProfile = await t.run(['chat', '--profile', 'broken', '--max-retries', '0', 'hi'], { env });
    expect(viaProfile.code).toBe(8);
    expect(viaProfile.stderr).toMatch(/connection refused/);
    // Env overrides the profile's root; the profile's model is still used.
    t.clearRequests();
    const viaEnv = await t.run(['chat', '--profile', 'broken', 'write 3 words'], { env: { ...env, ROUTER_API_ROOT: t.apiRoot } });
    expect(viaEnv.code).toBe(0);
    expect(t.requests()[0]!.body.model).toBe('local/lorem');
    // A flag overrides env.
    const viaFlag = await t.run(['chat', '--profile', 'broken', '--api-root', t.apiRoot, '--model', 'local/echo', 'flag'], {
      env: { ...env, ROUTER_API_ROOT: 'http://127.0.0.1:9/api', ROUTER_MODEL: 'local/lorem' },
    });
    expect(viaFlag.stdout).toBe('flag\n');
    // ROUTER_PROFILE picks the profile; ROUTER_API_KEY overrides its key.
    const viaProfileEnv = await t.run(['chat', 'x'], { env: { ...env, ROUTER_PROFILE: 'local', ROUTER_API_KEY: 'sk-rt-v1-notthekeynotthekey' } });
    expect(viaProfileEnv.code, viaProfileEnv.stderr).toBe(3);
  });

  it("a profile's settings apply when the environment holds the key and the API root; the environment's win", async () => {
    const env = { ROUTER_CONFIG_DIR: join(t.dir, 'env-and-profile') };
    expect((await t.run(['config', 'set', 'model', 'local/lorem'], { env })).code).toBe(0);
    t.clearRequests();
    expect((await t.run(['chat', 'write 3 words'], { env })).code).toBe(0);
    expect(t.requests().at(-1)!.body.model).toBe('local/lorem');
    expect((await t.run(['chat', 'hi'], { env: { ...env, ROUTER_MODEL: 'local/echo' } })).stdout).toBe('hi\n');
  });

  it('config set and get say, on a terminal, when a variable goes before the profile\'s setting', async () => {
    const env = { ROUTER_CONFIG_DIR: join(t.dir, 'env-over-profile'), ROUTER_MODEL: 'local/echo' };
    const terminal = { stdin: false, stdout: true, stderr: true };
    const set = await runInProcess(['config', 'set', 'model', 'local/lorem'], { env: { ...t.env, ...env }, tty: terminal });
    expect(set).toMatchObject({ code: 0, stderr: 'set model of profile "default"\nROUTER_MODEL is set (local/echo) and goes before this setting\n' });
    const get = await runInProcess(['config', 'get', 'model'], { env: { ...t.env, ...env }, tty: terminal });
    expect(get).toMatchObject({ code: 0, stdout: 'local/lorem\n', stderr: 'ROUTER_MODEL is set (local/echo) and goes before this setting\n' });
    // A key is never shown; piped, stdout is the setting alone and stderr quiet.
    const key = await runInProcess(['config', 'get', 'api_key'], { env: { ...t.env, ...env }, tty: terminal, input: '' });
    expect(key.code).toBe(5);
    expect((await runInProcess(['config', 'get', 'model'], { env: { ...t.env, ...env } })).stderr).toBe('');
    const apiKey = await runInProcess(['config', 'set', 'api_key'], { env: { ...t.env, ...env }, tty: { stdin: false, stdout: false, stderr: true }, input: 'sk-rt-v1-x' });
    expect(apiKey.stderr).toBe(`saved the api_key of profile "default" in ${join(env.ROUTER_CONFIG_DIR, 'config.json')} (ROUTER_KEYCHAIN=off)\nROUTER_API_KEY is set and goes before this setting\n`);
  });

  it('config use says (on a terminal) when ROUTER_PROFILE picks another profile', async () => {
    const env = { ...t.env, ROUTER_CONFIG_DIR: join(t.dir, 'use-env-profile') };
    for (const p of ['one', 'two']) expect((await runInProcess(['config', 'set', 'model', 'local/echo', '--profile', p], { env })).code).toBe(0);
    const terminal = { stdin: false, stdout: false, stderr: true };
    const r = await runInProcess(['config', 'use', 'two'], { env: { ...env, ROUTER_PROFILE: 'one' }, tty: terminal });
    expect(r).toMatchObject({ code: 0, stderr: 'now using profile "two"\nROUTER_PROFILE is set (one) and goes before it\n' });
    expect((await runInProcess(['config', 'use', 'one'], { env: { ...env, ROUTER_PROFILE: 'one' }, tty: terminal })).stderr).toBe('now using profile "one"\n');
  });

  it('login checked against ROUTER_API_ROOT says that the profile does not keep that root', async () => {
    const env = { ...t.env, ROUTER_CONFIG_DIR: join(t.dir, 'login-env-root'), ROUTER_API_KEY: '' };
    const r = await runInProcess(['login', '--with-key'], { env, input: t.apiKey, tty: { stdin: false, stdout: false, stderr: true } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`the key was checked against ${t.apiRoot} (ROUTER_API_ROOT), which profile "default" does not keep: give --api-root "$ROUTER_API_ROOT" to keep it\n`);
    const kept = await runInProcess(['login', '--with-key', '--api-root', t.apiRoot], { env, input: t.apiKey, tty: { stdin: false, stdout: false, stderr: true } });
    expect(kept.stderr).not.toContain('does not keep');
  });

  it('config get of a profile that does not exist says so, not that the setting is unset', async () => {
    const env = { ROUTER_CONFIG_DIR: join(t.dir, 'get-missing-profile') };
    expect((await t.run(['config', 'set', 'model', 'local/lorem'], { env })).code).toBe(0);
    for (const args of [['config', 'get', 'model', '--profile', 'zzzz'], ['--profile', 'zzzz', 'config', 'get', 'model']]) {
      expect(await t.run(args, { env })).toMatchObject({ code: 5, stdout: '', stderr: 'error: no profile "zzzz"; see router config list\n' });
    }
    expect(await t.run(['config', 'get', 'model'], { env: { ...env, ROUTER_PROFILE: 'zzzz' } })).toMatchObject({ code: 5, stderr: 'error: no profile "zzzz"; see router config list\n' });
    expect(await t.run(['config', 'get', 'voice'], { env })).toMatchObject({ code: 5, stdout: '', stderr: 'error: voice is not set in profile "default" (router config set voice VALUE; ROUTER_VOICE goes before it)\n' });
  });

  it('config get of a setting not set says its default, where router has one, and how each setting is set', async () => {
    const env = { ROUTER_CONFIG_DIR: join(t.dir, 'get-defaults') };
    expect((await t.run(['config', 'set', 'model', 'local/lorem'], { env })).code).toBe(0);
    // Logging is on with nothing set: the answer says so rather than only "not set".
    expect(await t.run(['config', 'get', 'log'], { env })).toMatchObject({
      code: 5,
      stdout: '',
      stderr: 'error: log is not set in profile "default": its default is on (router config set log on|off; ROUTER_NO_LOG=1 or --no-log turn it off)\n',
    });
    expect((await t.run(['config', 'get', 'api_root'], { env })).stderr).toContain(': its default is https://openrouter.ai/api (router config set api_root VALUE; ROUTER_API_ROOT goes before it)');
    expect((await t.run(['config', 'get', 'api_key'], { env })).stderr).toContain('(printf %s "$KEY" | router config set api_key; ROUTER_API_KEY goes before it; router login)');
    // Every setting, from the list the command's help shows, says how it is set.
    const help = (await t.run(['config', 'get', '--help'], { env })).stdout;
    const fields = /Arguments:\s+setting\s+([\s\S]*?)\n\nOptions/.exec(help)![1]!.split(/[|\s]+/).filter(Boolean);
    expect(fields.length).toBeGreaterThan(10);
    for (const f of fields.filter((x) => x !== 'model')) {
      const r = await t.run(['config', 'get', f], { env });
      expect(r, f).toMatchObject({ code: 5, stdout: '' });
      expect(r.stderr, f).toMatch(new RegExp(`^error: ${f} is not set in profile "default"(: its default is \\S+)? \\((printf %s "\\$KEY" \\| )?router config set ${f}\\b[^\\n]*\\)\\n$`));
    }
  });

  it('config unset removes a setting (a budget stops holding calls); one not set is left as it is; a tiny budget is kept as typed', async () => {
    const env = { ROUTER_CONFIG_DIR: join(t.dir, 'unset'), ROUTER_STATE_DIR: join(t.dir, 'unset-state') };
    expect((await t.run(['config', 'set', 'daily_budget', '0.0000001'], { env })).code).toBe(0);
    expect((await t.run(['config', 'set', 'model', 'local/echo'], { env })).code).toBe(0);
    const held = await t.run(['chat', 'hi'], { env });
    expect(held).toMatchObject({ code: 4, stdout: '', stderr: expect.stringMatching(/^error: this call could cost up to .*daily_budget/) });
    const terminal = { env: { ...t.env, ...env }, tty: { stdin: false, stdout: true, stderr: true } };
    expect(await runInProcess(['config', 'unset', 'daily_budget'], terminal)).toMatchObject({ code: 0, stdout: '', stderr: 'unset daily_budget of profile "default"\n' });
    expect(await t.run(['chat', 'hi'], { env })).toMatchObject({ code: 0, stdout: 'hi\n' });
    expect((await t.run(['config', 'get', 'daily_budget'], { env })).code).toBe(5);
    expect((await t.run(['config', 'get', 'model'], { env })).stdout).toBe('local/echo\n');
    // Again: nothing to do, and said so on a terminal.
    expect(await runInProcess(['config', 'unset', 'daily_budget'], terminal)).toMatchObject({ code: 0, stderr: 'daily_budget was not set in profile "default"\n' });
    expect(await t.run(['config', 'unset', 'daily_budget'], { env })).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await t.run(['config', 'unset', 'daily_budgt'], { env })).toMatchObject({ code: 2, stderr: expect.stringContaining('(did you mean daily_budget?)') });
    expect(await t.run(['config', 'unset', 'model', '--profile', 'zzzz'], { env })).toMatchObject({ code: 5, stderr: 'error: no profile "zzzz"; see router config list\n' });
  });

  it('speak and embed take their voice and models from the environment, else the profile; a flag wins', async () => {
    const env = { ROUTER_CONFIG_DIR: join(t.dir, 'speech-defaults'), ROUTER_MANAGEMENT_KEY: t.managementKey };
    t.clearRequests();
    const none = await t.run(['speak', 'hi'], { env });
    expect(none).toMatchObject({ code: 2, stdout: '' });
    expect(none.stderr).toBe('error: no model and no voice: give --model (a speech model, e.g. local/tts) and --voice (e.g. alloy), or set defaults: router config set speech_model local/tts; router config set voice alloy\n');
    const noModel = await t.run(['speak', 'hi', '--voice', 'alloy'], { env });
    expect(noModel.stderr).toBe('error: no model: give --model (a speech model, e.g. local/tts), or set a default: router config set speech_model local/tts\n');
    const noVoice = await t.run(['speak', 'hi', '--model', 'local/tts'], { env });
    expect(noVoice.stderr).toBe('error: no voice: give --voice (e.g. alloy), or set a default: router config set voice alloy\n');
    expect(t.requests()).toHaveLength(0);

    for (const [setting, value] of [['voice', 'sage'], ['speech_model', 'local/tts'], ['embed_model', 'local/embed']]) {
      expect((await t.run(['config', 'set', setting!, value!], { env })).code).toBe(0);
    }
    const speak = await t.run(['speak', 'hi'], { env });
    expect(speak.code).toBe(0);
    expect([speak.stdoutBytes[0], speak.stdoutBytes[1]! & 0xe0]).toEqual([0xff, 0xe0]); // an MPEG frame
    expect(t.requests().filter((q) => q.path.endsWith('/audio/speech')).at(-1)!.body).toMatchObject({ model: 'local/tts', voice: 'sage' });
    await t.run(['speak', 'hi'], { env: { ...env, ROUTER_VOICE: 'alloy' } });
    expect(t.requests().filter((q) => q.path.endsWith('/audio/speech')).at(-1)!.body.voice).toBe('alloy');
    await t.run(['speak', 'hi', '--voice', 'echo', '--model', 'local/tts-basic'], { env: { ...env, ROUTER_VOICE: 'alloy' } });
    // (The voice is refused; the model list is read after, for a guess.)
    expect(t.requests().filter((q) => q.path.endsWith('/audio/speech')).at(-1)!.body).toMatchObject({ model: 'local/tts-basic', voice: 'echo' });
    const embed = await t.run(['embed', 'hello'], { env });
    expect(JSON.parse(embed.stdout).model).toBe('local/embed');

    // A model of the wrong shape is refused where it is set, and named where it comes from when used.
    t.clearRequests();
    const badSet = await t.run(['config', 'set', 'speech_model', 'tts'], { env });
    expect(badSet).toMatchObject({ code: 2, stderr: 'error: speech_model must look like <author>/<slug> or name an alias, got "tts": did you mean local/tts?\n' });
    expect((await t.run(['config', 'set', 'voice', ''], { env })).stderr).toBe('error: voice must not be empty (an unset variable?); router config unset voice removes it\n');
    const badEnv = await t.run(['embed', 'hello'], { env: { ...env, ROUTER_EMBED_MODEL: 'embed' } });
    expect(badEnv).toMatchObject({ code: 2, stderr: 'error: ROUTER_EMBED_MODEL must look like <author>/<slug> or name an alias, got "embed": did you mean local/embed?\n' });
    expect(t.requests()).toHaveLength(0);
  });

  it('use / delete / unknown settings', async () => {
    expect((await t.run(['config', 'use', 'nope'])).code).toBe(5);
    expect((await t.run(['config', 'use', 'local'])).code).toBe(0);
    const bad = await t.run(['config', 'set', 'colour', 'red']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown setting "colour"/);
    expect((await t.run(['config', 'set', 'api_root', 'ftp://x'])).code).toBe(2);
    expect((await t.run(['config', 'delete', 'broken'])).code).toBe(0);
    expect((await t.run(['config', 'delete', 'broken'])).code).toBe(5);
  });

  it('an API root given as the service base URL (…/api/v1, as its docs write it) works as the root', async () => {
    const env = { ROUTER_API_ROOT: '' };
    expect((await t.run(['config', 'set', 'api_root', `${t.apiRoot}/v1/`, '--profile', 'based'], { env })).code).toBe(0);
    expect((await t.run(['config', 'get', 'api_root', '--profile', 'based'], { env })).stdout).toBe(`${t.apiRoot}\n`);
    const viaEnv = await t.run(['chat', '--model', 'local/echo', 'base url'], { env: { ROUTER_API_ROOT: `${t.apiRoot}/v1` } });
    expect(viaEnv.stdout).toBe('base url\n');
    const viaFlag = await t.run(['--api-root', `${t.apiRoot}/v1`, 'chat', '--model', 'local/echo', 'flag'], { env });
    expect(viaFlag.stdout).toBe('flag\n');
  });

  it('a new profile needs a name a user can type back: refused before the key is read or checked; a blank ROUTER_PROFILE is unset', async () => {
    const env = { ROUTER_CONFIG_DIR: join(t.dir, 'names') };
    const before = t.requests().length;
    for (const name of [' ', 'a b', '../x', '-x', 'a\nb', 'é', 'x'.repeat(65)]) {
      const login = await t.run(['login', '--with-key', '--profile', name], { env, input: t.apiKey });
      expect(login).toMatchObject({ code: 2, stdout: '' });
      expect(login.stderr).toMatch(/^error: profile name ".*": use 1 to 64 letters, digits, "\.", "-" or "_", starting with a letter or digit\n$/s);
      expect((await t.run(['config', 'set', 'model', 'local/echo', '--profile', name], { env })).code).toBe(2);
      expect((await t.run(['config', 'set', 'api_key', '--profile', name], { env, input: t.apiKey })).code).toBe(2);
    }
    expect(t.requests()).toHaveLength(before);
    expect(JSON.parse((await t.run(['config', 'list', '--json'], { env })).stdout).profiles).toEqual([]);
    expect((await t.run(['login', '--with-key', '--no-verify', '--profile', 'work-2.eu_1', '--api-root', t.apiRoot], { env, input: t.apiKey })).code).toBe(0);
    expect(await t.run(['chat', '--model', 'local/echo', 'hi'], { env: { ...env, ROUTER_PROFILE: ' ', ROUTER_API_KEY: '', ROUTER_API_ROOT: '' } })).toMatchObject({ code: 0, stdout: 'hi\n' });
    // A name of 5,000 letters against a profile of 100,000 (made by hand): no suggestion to compute, one line.
    writeFileSync(join(env.ROUTER_CONFIG_DIR, 'config.json'), JSON.stringify({ current: 'default', profiles: { default: {}, ['p'.repeat(100_000)]: {} } }));
    const long = await t.run(['--profile', 'p'.repeat(5000), 'batch', 'list'], { env });
    expect(long).toMatchObject({ code: 2, stderr: `error: no profile "${'p'.repeat(40)}…" (profiles: default, ${'p'.repeat(40)}…)\n` });
  });

  it('a typed --profile "" (an unset variable) is refused, not taken as the current profile', async () => {
    const env = { ROUTER_CONFIG_DIR: join(t.dir, 'empty-profile-flag') };
    expect((await t.run(['config', 'set', 'model', 'local/lorem'], { env })).code).toBe(0);
    const before = t.requests().length;
    for (const argv of [['--profile', '', 'chat', '--model', 'local/echo', 'hi'], ['config', 'set', 'model', 'local/echo', '--profile', ''], ['login', '--with-key', '--profile', '']]) {
      const r = await t.run(argv, { env, input: t.apiKey });
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^error: option '-p, --profile <name>' argument '' is invalid: must not be empty \(with no --profile, the current profile is used\)/);
    }
    expect(t.requests()).toHaveLength(before);
    expect((await t.run(['config', 'get', 'model'], { env })).stdout).toBe('local/lorem\n');
  });

  it('login without --with-key on a non-TTY stdin refuses instead of prompting', async () => {
    const r = await t.run(['login']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--with-key/);
  });
});

describe('changes from processes at once', () => {
  const configIn = (name: string) => ({ ROUTER_CONFIG_DIR: join(t.dir, name) });
  const models = async (env: Record<string, string>) =>
    Object.fromEntries((JSON.parse((await t.run(['config', 'list', '--json'], { env })).stdout).profiles as { name: string; model?: string }[]).map((p) => [p.name, p.model]));

  it('sixteen `config set` run together: every change is kept (a read, change and write at a time)', async () => {
    const env = configIn('parallel');
    const runs = await Promise.all(Array.from({ length: 16 }, (_, i) => t.run(['config', 'set', 'model', `local/m${i}`, '--profile', `p${i}`], { env })));
    expect(runs.map((r) => r.code)).toEqual(runs.map(() => 0));
    expect(await models(env)).toEqual(Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`p${i}`, `local/m${i}`])));
    expect(readdirSync(join(t.dir, 'parallel'))).toEqual(['config.json']);
  });

});
