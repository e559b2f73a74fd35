import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureMain, startCliEnv, type CliEnv } from '../support/cli-env.js';
import { createHash } from 'node:crypto';

// A key kept only in the keychain is known by the mark its profile keeps (docs/keys.md): hidden in what chat prints and
// what was kept, by runs that never read the keychain (none is reachable here: ROUTER_KEYCHAIN=off, as for every test);
// a prompt holding a known key is said on stderr; a tool gets no variable holding one. keychain-marks.test.ts stores
// the key in gnome-keyring for real.
const KEY = `sk-or-v1-${'a1b2'.repeat(16)}`;
/** Another profile's key kept in the config file. */
const OTHER = 'sk-rt-other-profile-0123456789abcdef';
const WARNING = 'warning: the prompt holds a key router knows (****)';
let t: CliEnv;
/** The mark `router login` keeps beside a keychain entry: `sha256:LENGTH:KIND:SALT:HASH` (src/internal/key-marks.ts). */
const SALT = '0f'.repeat(16);
const MARK = `sha256:${KEY.length}:sk-or-v1-:${SALT}:${createHash('sha256').update(SALT).update(KEY).digest('hex')}`;

async function run(args: string[], env: Record<string, string> = {}) {
  const { code, out, err } = await captureMain(args, { input: Buffer.alloc(0), env: { ...process.env, FORCE_COLOR: undefined, ...t.env, ...env } });
  const r = { code, stdout: out.toString('utf8'), stderr: err.toString('utf8') };
  expect(r.stdout + r.stderr).not.toContain(KEY.slice(0, 20));
  return r;
}

beforeAll(async () => {
  t = await startCliEnv();
  const profiles = { work: { api_key_keychain: 'work/api_key (elsewhere)', api_key_keychain_mark: MARK }, other: { api_key: OTHER } };
  mkdirSync(t.env.ROUTER_CONFIG_DIR!, { recursive: true, mode: 0o700 });
  writeFileSync(join(t.env.ROUTER_CONFIG_DIR!, 'config.json'), JSON.stringify({ current: 'default', profiles }), { mode: 0o600 });
});
afterAll(() => t.close());

describe('a key kept in the keychain, known by its mark', () => {
  it('chat prints it as ****, streamed, whole and as JSON; and says the prompt held a key', async () => {
    const r = await run(['chat', '--conversation', 'marks', '--model', 'local/echo', `use ${KEY} for "work"`]);
    expect(r).toMatchObject({ code: 0, stdout: 'use **** for "work"\n' });
    expect(r.stderr).toContain(WARNING);
    const whole = await run(['chat', '--no-stream', '--model', 'local/echo', `x${KEY}`]);
    expect(whole.stdout).toBe('x****\n');
    const json = await run(['chat', '--json', '--stream', '--model', 'local/echo', `one ${KEY} two`]);
    const text = json.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('one **** two');
    const responses = await run(['responses', '--model', 'local/echo', `three ${KEY}`]);
    expect(responses).toMatchObject({ code: 0, stdout: 'three ****\n' });
    expect(responses.stderr).toContain(WARNING);
  });

  it('router logs and conversations show print it as ****', async () => {
    const logs = await run(['logs', '-n', '3']);
    expect(logs.stdout).toContain('use **** for "work"');
    expect((await run(['logs', '--json'])).stdout).toContain('use **** for \\"work\\"');
    const show = await run(['conversations', 'show', 'marks']);
    expect(show.stdout).toBe('user: use **** for "work"\n\nassistant: use **** for "work"\n');
  });

  it('a prompt with no key is not warned about; one with the key sent or another profile\'s is', async () => {
    expect((await run(['chat', '--model', 'local/echo', 'no key here sk-or-v1-'])).stderr).toBe('');
    expect((await run(['chat', '--model', 'local/echo', `sent ${t.apiKey}`])).stderr).toContain(WARNING);
    expect((await run(['chat', '--model', 'local/echo', `other ${OTHER}`])).stderr).toContain(WARNING);
  });

  it('a tool starts without a variable holding it or another profile\'s key', async () => {
    const out = join(t.dir, 'marks-env.txt');
    const tools = join(t.dir, 'marks-tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } }, command: `env > ${out}; echo sunny` }]));
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools, 'weather'], { WORK_KEY: KEY, OTHER_KEY: `Bearer ${OTHER}`, PLAIN: 'kept' });
    expect(r.code, r.stderr).toBe(0);
    const seen = readFileSync(out, 'utf8');
    expect(seen).toContain('PLAIN=kept\n');
    expect(seen).not.toMatch(/^(WORK_KEY|OTHER_KEY)=/m);
  });
});
