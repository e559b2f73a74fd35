import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSettings } from '../../src/config/settings.js';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
beforeAll(async () => {
  t = await startCliEnv();
  await t.run(['config', 'set', 'model', 'local/lorem', '--profile', 'work']);
  await t.run(['config', 'set', 'speech_model', 'local/tts', '--profile', 'work']);
  await t.run(['config', 'set', 'daily_budget', '5', '--profile', 'work']);
});
afterAll(() => t.close());

/** The profile file edited by hand: a value `config set` would refuse. */
async function editProfileFile(from: string, to: string): Promise<() => void> {
  const path = (await t.run(['config', 'path'])).stdout.trim();
  const before = readFileSync(path, 'utf8');
  writeFileSync(path, before.replace(from, to));
  return () => writeFileSync(path, before);
}

describe('settings record where each value came from', () => {
  it('a flag, the environment, a profile', async () => {
    const s = await resolveSettings({ profile: 'work', apiRoot: t.apiRoot }, { ...t.env, ROUTER_VOICE: 'alloy' });
    expect(s.model).toBe('local/lorem');
    expect(s.from).toEqual({
      apiRoot: { kind: 'flag', name: '--api-root' },
      apiKey: { kind: 'env', name: 'ROUTER_API_KEY' },
      model: { kind: 'profile', name: 'work', field: 'model' },
      voice: { kind: 'env', name: 'ROUTER_VOICE' },
      speechModel: { kind: 'profile', name: 'work', field: 'speech_model' },
      dailyBudget: { kind: 'profile', name: 'work', field: 'daily_budget' },
    });
    const fromEnv = await resolveSettings({ profile: 'work' }, { ...t.env, ROUTER_MODEL: 'local/echo', ROUTER_DAILY_BUDGET: '1' });
    expect(fromEnv.from).toMatchObject({ apiRoot: { kind: 'env', name: 'ROUTER_API_ROOT' }, model: { kind: 'env', name: 'ROUTER_MODEL' }, dailyBudget: { kind: 'env', name: 'ROUTER_DAILY_BUDGET' } });
  });

  it('a bad model id in a profile is named by where it came from, before any request', async () => {
    const restore = await editProfileFile('local/lorem', 'gpt-4o');
    try {
      t.clearRequests();
      const chat = await t.run(['chat', 'x', '--profile', 'work']);
      expect(chat).toMatchObject({ code: 2, stdout: '', stderr: 'error: the model of profile "work" must look like <author>/<slug> or name an alias, got "gpt-4o" (router aliases list)\n' });
      expect(t.requests()).toHaveLength(0);
      // The flag goes before the profile: its model is used and the profile's is not checked.
      const flagged = await t.run(['chat', 'x', '--no-stream', '--profile', 'work', '--model', 'local/echo']);
      expect(flagged).toMatchObject({ code: 0, stdout: 'x\n' });
    } finally {
      restore();
    }
  });

  it('a conversation goes on with its own model, before the environment and the profile', async () => {
    const first = await t.run(['chat', '--model', 'local/echo', '--no-stream', 'first']);
    expect(first.code).toBe(0);
    const more = await t.run(['chat', '-c', '--no-stream', 'again'], { env: { ROUTER_MODEL: 'gpt-4o' } });
    expect(more).toMatchObject({ code: 0, stdout: 'again\n' });
    const fresh = await t.run(['chat', '--no-stream', 'new'], { env: { ROUTER_MODEL: 'gpt-4o' } });
    expect(fresh.stderr).toBe('error: ROUTER_MODEL must look like <author>/<slug> or name an alias, got "gpt-4o" (router aliases list)\n');
  });

  it("a role's model goes before the environment's", async () => {
    const roles = join(dirname((await t.run(['config', 'path'])).stdout.trim()), 'roles');
    mkdirSync(roles, { recursive: true });
    writeFileSync(join(roles, 'echoer.md'), '---\nmodel: local/echo\n---\n');
    const r = await t.run(['chat', '--role', 'echoer', '--no-stream', 'hi'], { env: { ROUTER_MODEL: 'gpt-4o' } });
    expect(r).toMatchObject({ code: 0, stdout: 'hi\n' });
  });

  it('a budget names where it was set', async () => {
    const spent = await t.run(['chat', '--model', 'local/echo', '--no-stream', 'hi', '--profile', 'work'], { env: { ROUTER_DAILY_BUDGET: '0' } });
    expect(spent).toMatchObject({ code: 4, stdout: '' });
    // The profile was named on purpose and sets its own budget: that the variable goes before it is said first.
    expect(spent.stderr).toMatch(/^note: the environment goes before profile "work" for daily_budget \(ROUTER_DAILY_BUDGET\): unset it to use the profile's\nerror: daily_budget of \$0[.0]* reached \(ROUTER_DAILY_BUDGET\)/);
  });

  it('a refused key is named by where it came from, the management key too', async () => {
    const refused = 'sk-rt-v1-0000000000000000000000000000000000000000000000';
    const env = await t.run(['chat', '--model', 'local/echo', '--no-stream', 'hi'], { env: { ROUTER_API_KEY: refused } });
    expect(env).toMatchObject({ code: 3, stdout: '', stderr: 'error: POST /api/v1/chat/completions: 401 Unauthorized: Invalid API key (check the API key in ROUTER_API_KEY)\n' });
    expect((await t.run(['config', 'set', 'api_key', '--profile', 'work'], { input: refused })).code).toBe(0);
    const profile = await t.run(['chat', '--model', 'local/echo', '--no-stream', 'hi', '--profile', 'work'], { env: { ROUTER_API_KEY: '' } });
    expect(profile.stderr).toBe('error: POST /api/v1/chat/completions: 401 Unauthorized: Invalid API key (check the API key of profile "work": router config set api_key --profile work)\n');
    // speak and decide send the management key: a refused one is not the API key's fault.
    const speak = await t.run(['speak', 'hi', '--model', 'local/tts', '--voice', 'alloy', '-o', join(t.dir, 'x.mp3')], { env: { ROUTER_MANAGEMENT_KEY: refused } });
    expect(speak).toMatchObject({ code: 3, stderr: 'error: POST /api/v1/audio/speech: 401 Unauthorized: Invalid API key (check the management key in ROUTER_MANAGEMENT_KEY)\n' });
    const decide = await t.run(['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'a', 'b'], { env: { ROUTER_MANAGEMENT_KEY: refused } });
    expect(decide.stderr).toBe('error: POST /api/alpha/decisions: 401 Unauthorized: Invalid API key (check the management key in ROUTER_MANAGEMENT_KEY)\n');
    // router api prints the body, then the same words.
    const api = await t.run(['api', '--management', '/v1/credits'], { env: { ROUTER_MANAGEMENT_KEY: refused } });
    expect(api).toMatchObject({ code: 3, stderr: 'error: GET /api/v1/credits: 401 Unauthorized: Invalid API key (check the management key in ROUTER_MANAGEMENT_KEY)\n' });
  });

  it('a model the service does not know is named by where it came from, when it was not typed', async () => {
    const unknown = 'error: POST /api/v1/chat/completions: 400 Bad Request: local/zzzzzz is not a valid model ID';
    const typed = await t.run(['chat', '--model', 'local/zzzzzz', '--no-stream', 'hi']);
    expect(typed).toMatchObject({ code: 2, stderr: `${unknown} (the list: router models)\n` });
    const env = await t.run(['chat', '--no-stream', 'hi'], { env: { ROUTER_MODEL: 'local/zzzzzz' } });
    expect(env).toMatchObject({ code: 2, stderr: `${unknown} (from ROUTER_MODEL; the list: router models)\n` });
    const embed = await t.run(['embed', 'hi'], { env: { ROUTER_EMBED_MODEL: 'local/zzzzzz' } });
    expect(embed.stderr).toBe(`${unknown.replace('chat/completions', 'embeddings')} (from ROUTER_EMBED_MODEL; the list: router models)\n`);
    const roles = join(dirname((await t.run(['config', 'path'])).stdout.trim()), 'roles');
    mkdirSync(roles, { recursive: true });
    writeFileSync(join(roles, 'gone.md'), '---\nmodel: local/zzzzzz\n---\n');
    const role = await t.run(['chat', '--role', 'gone', '--no-stream', 'hi']);
    expect(role.stderr).toBe(`${unknown} (from role gone; the list: router models)\n`);
    // A flag typed over the role is the user's own.
    expect((await t.run(['chat', '--role', 'gone', '--model', 'local/zzzzzz', '--no-stream', 'hi'])).stderr).toBe(`${unknown} (the list: router models)\n`);
  });

  it('a voice the model does not have, taken from the environment or a profile, names where it came from', async () => {
    const speak = (env: Record<string, string>, ...flags: string[]) => t.run(['speak', 'hi', '--model', 'local/tts', '-o', join(t.dir, 'v.mp3'), ...flags], { env: { ROUTER_MANAGEMENT_KEY: t.managementKey, ...env } });
    const unknown = 'error: POST /api/v1/audio/speech: 400 Bad Request: voice "zzz" is not a voice of local/tts (alloy, ember, sage)';
    expect(await speak({ ROUTER_VOICE: 'zzz' })).toMatchObject({ code: 2, stderr: `${unknown} (from ROUTER_VOICE)\n` });
    expect((await speak({}, '--voice', 'zzz')).stderr).toBe(`${unknown}\n`);
  });

  it('an API root that cannot be reached is named by where it came from, by one rule: flag, environment, profile', async () => {
    const down = 'http://127.0.0.1:9/api';
    const refused = 'error: connection refused: 127.0.0.1:9, on this machine: is router serve running?';
    const env = await t.run(['--max-retries', '0', 'chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_API_ROOT: down } });
    expect(env).toMatchObject({ code: 8, stderr: `${refused} (the API root from ROUTER_API_ROOT)\n` });
    // Was: typed on the command line, the root was left unnamed (a script's --api-root is as far from sight as a variable).
    const typed = await t.run(['--api-root', down, '--max-retries', '0', 'chat', '--model', 'local/echo', 'hi']);
    expect(typed).toMatchObject({ code: 8, stderr: `${refused} (the API root from --api-root)\n` });
    await t.run(['config', 'set', 'api_root', down, '--profile', 'gone']);
    const profile = await t.run(['--profile', 'gone', '--max-retries', '0', 'chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_API_ROOT: '' } });
    expect(profile).toMatchObject({ code: 8, stderr: `${refused} (the API root from api_root of profile "gone")\n` });
  });
});
