import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AuthenticationError, ConnectionError, ValidationError } from '../../src/client/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { clientFromProfile, KitError, ProfileError } from '../../src/kit/index.js';
import { runInProcess } from '../support/inprocess.js';

// llm's get_key() takes the key its CLI keeps; the kit's clientFromProfile() the key and API root `router login` and
// `router config` keep, by the CLI's own rules: options over ROUTER_API_KEY / ROUTER_API_ROOT / ROUTER_PROFILE over the profile.
let emu: Emulator;
let dir: string;
let key: string;
let managementKey: string;
let env: Record<string, string>;
let cli: Record<string, string>;
const WRONG = 'sk-wrong-key-0123456789abcdef';
const DEAD_ROOT = 'http://127.0.0.1:9/api';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-kit-profile-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  ({ apiKey: key, managementKey } = emu.store.firstKeys());
  writeFileSync(join(dir, 'key.txt'), key);
  // The config file where the XDG rule puts it (no ROUTER_CONFIG_DIR), as a user's is; no key or root in the environment.
  env = { HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'xdg'), ROUTER_STATE_DIR: join(dir, 'cli-state'), ROUTER_KEYCHAIN: 'off', PATH: process.env.PATH ?? '/usr/bin:/bin' };
  cli = { ...env, ROUTER_CONFIG_DIR: '', ROUTER_API_KEY: '', ROUTER_API_ROOT: '', ROUTER_PROFILE: '', ROUTER_MANAGEMENT_KEY: '' };
  const set = async (args: string[], input?: string) => expect(await runInProcess(['config', 'set', ...args], { env: cli, input })).toMatchObject({ code: 0 });
  await set(['api_key'], key);
  await set(['api_root', emu.apiRoot]);
  await set(['api_key', '--profile', 'stale'], WRONG);
  await set(['api_root', emu.apiRoot, '--profile', 'stale']);
  await set(['api_root', emu.apiRoot, '--profile', 'keyless']);
  await set(['api_key_command', `cat '${join(dir, 'key.txt')}'`, '--profile', 'command']);
  await set(['api_root', emu.apiRoot, '--profile', 'command']);
  await set(['api_key_command', 'echo not the key >&2; exit 4', '--profile', 'failing']);
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The echo of a call by the client made (the emulator refuses the stale profile's key: a call answered sent the right one). */
async function echo(opts: Parameters<typeof clientFromProfile>[0]): Promise<unknown> {
  const client = await clientFromProfile(opts);
  try {
    return (await client.chat.create({ model: 'local/echo', messages: [{ role: 'user', content: 'from the profile' }] })).choices[0]?.message.content;
  } finally {
    await client.close();
  }
}

const refused = (p: Promise<unknown>) => p.then(() => expect.unreachable('no error'), (e: unknown) => e as ProfileError);

it("takes the current profile's key and API root, kept in the config file by router config set", async () => {
  expect(await echo({ env })).toBe('from the profile');
});

it('ROUTER_PROFILE, ROUTER_API_KEY and ROUTER_API_ROOT go before the profile, and the options before them', async () => {
  // The stale profile's key is refused: the environment's goes instead.
  await expect(echo({ env: { ...env, ROUTER_PROFILE: 'stale' } })).rejects.toBeInstanceOf(AuthenticationError);
  expect(await echo({ env: { ...env, ROUTER_PROFILE: 'stale', ROUTER_API_KEY: key } })).toBe('from the profile');
  expect(await echo({ env: { ...env, ROUTER_API_KEY: WRONG }, apiKey: key })).toBe('from the profile');
  // The profile named here goes before ROUTER_PROFILE; the root given, before ROUTER_API_ROOT's dead one.
  await expect(echo({ env: { ...env, ROUTER_PROFILE: 'default' }, profile: 'stale' })).rejects.toBeInstanceOf(AuthenticationError);
  expect(await echo({ env: { ...env, ROUTER_API_ROOT: DEAD_ROOT }, apiRoot: emu.apiRoot, maxRetries: 0 })).toBe('from the profile');
  await expect(echo({ env: { ...env, ROUTER_API_ROOT: DEAD_ROOT }, maxRetries: 0 })).rejects.toBeInstanceOf(ConnectionError);
});

it("reads a key where the profile keeps it, as router does: its key command's output", async () => {
  expect(await echo({ env, profile: 'command' })).toBe('from the profile');
  const e = await refused(clientFromProfile({ env, profile: 'failing' }));
  expect([e instanceof ProfileError, e.code, e.profile]).toEqual([true, 'key_unavailable', 'failing']);
  expect(e.message).toMatch(/api_key_command of profile "failing" failed \(exit 4\)/);
  // A key the profile keeps in the keychain: test/e2e/keychain.test.ts, with a real Secret Service (read here, its native
  // binding would stay loaded in this worker, which key-command.test.ts checks no in-process run does).
});

it('a profile that does not exist, or has no key, is a ProfileError with its code, no key in its message', async () => {
  const missing = await refused(clientFromProfile({ env: { ...env, ROUTER_API_KEY: key }, profile: 'nope' }));
  expect([missing instanceof ProfileError, missing instanceof KitError, missing.code, missing.profile]).toEqual([true, true, 'not_found', 'nope']);
  expect(missing.message).toMatch(/^no profile "nope" \(profiles: /);
  const none = await refused(clientFromProfile({ env, profile: 'keyless' }));
  expect([none.code, none.profile, none.message]).toEqual(['no_key', 'keyless', 'no API key for profile "keyless": pass apiKey, set ROUTER_API_KEY, or store one with "router login --profile keyless"']);
  const bad = await refused(clientFromProfile({ env: { ...env, ROUTER_API_KEY: `Bearer ${key}` } }));
  expect([bad.code, bad.message.includes(key)]).toEqual(['invalid', false]);
  const root = await refused(clientFromProfile({ env, apiRoot: 'ftp://example.com' }));
  expect([root.code, root.message]).toEqual(['invalid', 'apiRoot must be an http(s) URL such as http://127.0.0.1:8080/api, got "ftp://example.com"']);
});

it('an option it does not take is refused before anything is read', async () => {
  await expect(clientFromProfile({ env, baseURL: emu.apiRoot } as never)).rejects.toThrow(new ValidationError('clientFromProfile() has no option "baseURL": did you mean apiRoot?'));
});

it('resolves as router does for the same settings: a call router makes with them goes through, or is refused, as the client\'s', async () => {
  const cases: [Record<string, string>, string][] = [[{}, 'from the profile'], [{ ROUTER_PROFILE: 'stale' }, 'refused'], [{ ROUTER_PROFILE: 'stale', ROUTER_API_KEY: key }, 'from the profile'], [{ ROUTER_PROFILE: 'command' }, 'from the profile']];
  for (const [over, expected] of cases) {
    const r = await runInProcess(['chat', '-m', 'local/echo', 'from the profile'], { env: { ...cli, ...over } });
    const kit = await echo({ env: { ...env, ...over } }).catch((e: unknown) => (e instanceof AuthenticationError ? 'refused' : e));
    expect({ over, router: r.code === 0 ? r.stdout.trim() : r.code === 3 ? 'refused' : r.stderr, kit }).toEqual({ over, router: expected, kit: expected });
  }
});

it('management: true sends the management key where one is set, as router keys does', async () => {
  const client = await clientFromProfile({ env: { ...env, ROUTER_MANAGEMENT_KEY: managementKey }, management: true });
  try {
    expect(typeof (await client.credits.get()).total_credits).toBe('number');
  } finally {
    await client.close();
  }
  const plain = await clientFromProfile({ env: { ...env, ROUTER_MANAGEMENT_KEY: managementKey } });
  await expect(plain.credits.get().finally(() => plain.close())).rejects.toThrow();
});

it("onNote hears the notes router prints on stderr for the same settings, word for word; without it the client is made all the same", async () => {
  // A mistyped variable, a switch read as off, and two variables before the named profile's fields (one by its /v1 only).
  const over = { ROUTER_PROFILE: 'stale', ROUTER_API_KEY: key, ROUTER_API_ROOT: `${emu.apiRoot}/v1`, ROUTER_MODLE: 'local/echo', ROUTER_NO_LOG: 'on' };
  const r = await runInProcess(['chat', '-m', 'local/echo', 'from the profile'], { env: { ...cli, ...over } });
  expect(r.code, r.stderr).toBe(0);
  const said = r.stderr.split('\n').filter(Boolean);
  expect(said).toEqual([
    'note: ROUTER_NO_LOG="on" is read as off (1, true or yes turns it on)',
    'note: router reads no ROUTER_MODLE: did you mean ROUTER_MODEL? (it is left unread)',
    'note: the environment goes before profile "stale" for api_root (ROUTER_API_ROOT), api_key (ROUTER_API_KEY): unset those to use the profile\'s',
  ]);
  const heard: string[] = [];
  expect(await echo({ env: { ...env, ...over }, onNote: (line) => heard.push(line) })).toBe('from the profile');
  expect(heard).toEqual(said);
  expect(await echo({ env: { ...env, ...over } })).toBe('from the profile');
  // The model, a budget: settings a client is not made with, said by the commands that use them only.
  heard.length = 0;
  await (await clientFromProfile({ env: { ...env, ROUTER_PROFILE: 'stale', ROUTER_MONTHLY_BUDGET: '5' }, onNote: (line) => heard.push(line) })).close();
  expect(heard).toEqual([]);
  await expect(clientFromProfile({ env, onNote: 'console.error' } as never)).rejects.toThrow(new ValidationError('clientFromProfile() onNote must be a function that takes each note, not "console.error"'));
});
