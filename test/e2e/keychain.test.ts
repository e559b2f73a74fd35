import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli, startTestEnv, type TestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { processAlive } from '../../src/internal/process.js';
import { closedStatus } from '../support/run-process.js';

// Keys in the keychain for real (issue 45, item 11): gnome-keyring's Secret Service on a D-Bus session
// of its own (dbus-run-session), unlocked without a prompt, in a home folder of its own. scripts/test-tools.sh
// installs both in CI, where their absence fails; elsewhere it skips, saying why.
const have = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
const ready = process.platform === 'linux' && have('dbus-run-session') && have('gnome-keyring-daemon');
const missing = 'dbus-run-session or gnome-keyring-daemon is not installed (bash scripts/test-tools.sh installs them)';
const inCi = !!process.env.CI;
if (!ready && !inCi) process.stderr.write(`keychain.test.ts: the Secret Service tests are skipped: ${missing}\n`);

const SESSION = fileURLToPath(new URL('../support/keychain-session.mjs', import.meta.url));

let t: TestEnv;
let home: string;
beforeAll(async () => {
  t = await startTestEnv();
  home = mkdtempSync(join(tmpdir(), 'router-keychain-'));
});
afterAll(async () => {
  await t.close();
  rmSync(home, { recursive: true, force: true });
});

/** The environment of a run in its own home: no keychain of the machine's reachable, ROUTER_KEYCHAIN not off. */
function ownHome(name: string): Record<string, string | undefined> {
  const dir = join(home, name);
  mkdirSync(join(dir, 'run'), { recursive: true, mode: 0o700 });
  const env: Record<string, string | undefined> = { ...process.env, ...t.env, HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'xdg'), XDG_RUNTIME_DIR: join(dir, 'run'), ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_KEYCHAIN: '', ROUTER_API_KEY: '', ROUTER_NO_LOG: '1' };
  return { ...env, DISPLAY: undefined, DBUS_SESSION_BUS_ADDRESS: undefined };
}

describe.runIf(process.platform === 'linux')('a key command that hangs', () => {
  it('ends with Ctrl-C: exit 130, and the command with it', async () => {
    const env = ownHome('hang');
    const pidFile = join(home, 'hang.pid');
    expect((await runCli(['config', 'set', 'api_key_command', `echo $$ > '${pidFile}'; exec sleep 60`], { env })).code).toBe(0);
    const child = t.spawn(['chat', '-m', 'local/echo', 'hi'], env as Record<string, string>);
    const exited = closedStatus(child);
    expect(await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'))).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(await until(() => !processAlive(pid))).toBe(true);
  });
});

describe.runIf(process.platform === 'linux')('where there is no keychain', () => {
  it('login keeps the key in the 0600 file and says why, even piped', async () => {
    const env: Record<string, string | undefined> = { ...ownHome('none'), DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' };
    // Spawned without blocking: the emulator the key is checked against runs in this process.
    const r = await runCli(['login', '--with-key'], { env, input: t.apiKey });
    expect(r.code).toBe(0);
    const path = join(env.ROUTER_CONFIG_DIR!, 'config.json');
    // Then, as the key was checked against ROUTER_API_ROOT, that the profile does not keep that root.
    expect(r.stderr).toMatch(new RegExp(`^saved the api_key of profile "default" in ${path.replace(/[.]/g, '\\.')} \\(a private 0600 file\\): no keychain to keep it in \\(.+\\)\\nthe key was checked against .+ \\(ROUTER_API_ROOT\\), which profile "default" does not keep: .+\\n$`));
    expect(JSON.parse(readFileSync(path, 'utf8')).profiles.default.api_key).toBe(t.apiKey);
    const dry = await runCli(['auth', 'migrate', '--dry-run', '--json'], { env });
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ keychain: 'the Secret Service keyring', moved: [{ profile: 'default', key: 'api_key' }] });
    const migrate = await runCli(['auth', 'migrate'], { env });
    expect(migrate.code).toBe(1);
    expect(migrate.stderr).toMatch(/^error: cannot move the api_key of profile "default" into the Secret Service keyring: .+; it stays in /);
    expect(migrate.stderr.split('\n')).toHaveLength(2);
  });
});

describe.runIf(process.platform === 'linux')('why there is no keychain, in words (was the D-Bus library\'s own message)', () => {
  const saved = (env: Record<string, string | undefined>) => `saved the api_key of profile "default" in ${join(env.ROUTER_CONFIG_DIR!, 'config.json')} (a private 0600 file): no keychain to keep it in (`;
  it('no session bus: DBUS_SESSION_BUS_ADDRESS not set', async () => {
    const env = ownHome('no-bus');
    const r = await runCli(['config', 'set', 'api_key'], { env, input: 'sk-rt-v1-notreal0000' });
    // Was: "(no Secret Service on this D-Bus session (Using X11 for dbus-daemon autolaunch was disabled at compile time, set your DBUS_SESSION_BUS_ADDRESS instead))".
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: `${saved(env)}no D-Bus session: DBUS_SESSION_BUS_ADDRESS is not set)\n` });
  });
  it('a session bus address where none listens', async () => {
    const env = { ...ownHome('gone-bus'), DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' };
    const r = await runCli(['config', 'set', 'api_key'], { env, input: 'sk-rt-v1-notreal0000' });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`^${saved(env).replace(/[.()]/g, '\\$&')}no D-Bus session at DBUS_SESSION_BUS_ADDRESS \\("Failed to connect to socket /nonexistent/bus: .+"\\)\\)\\n$`));
  });
  it.skipIf(!ready)('gnome-keyring started by D-Bus with no keyring unlocked', async () => {
    const env = ownHome('locked');
    const child = spawn('dbus-run-session', ['--', process.execPath, BIN, 'config', 'set', 'api_key'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end('sk-rt-v1-notreal0000');
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c));
    expect(await new Promise((r) => child.on('close', r))).toBe(0);
    // Was: "(Secret Service: no result found)". dbus-daemon's own lines (activating gnome-keyring) are around it.
    expect(err.split('\n').filter((l) => l.startsWith('saved the'))).toEqual([
      `${saved(env)}the Secret Service has no default keyring unlocked ("Secret Service: no result found"): a desktop login unlocks one; else printf PASSWORD | gnome-keyring-daemon --unlock)`,
    ]);
  });
});

describe.skipIf(!ready && !inCi)(`the Secret Service of gnome-keyring${ready ? '' : ` (${missing})`}`, () => {
  it('login stores there; auth status, chat, migrate, unset and delete use it; the key is printed nowhere', async () => {
    if (!ready) throw new Error(`CI is set but ${missing}`);
    const env = ownHome('session');
    const keyFile = join(home, 'key');
    writeFileSync(keyFile, t.apiKey, { mode: 0o600 });
    const child = spawn('dbus-run-session', ['--', 'sh', '-c', 'printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$0" "$@"', process.execPath, SESSION, BIN, keyFile], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (err += c));
    const code = await new Promise((r) => child.on('close', r));
    expect(code, err).toBe(0);
    const r = JSON.parse(out);
    for (const [step, v] of Object.entries(r) as [string, { printedKey?: boolean }][]) expect(v.printedKey ?? false, step).toBe(false);

    expect(r.login).toMatchObject({ code: 0 });
    expect(r.login.stderr).toContain('saved the api_key of profile "default" in the Secret Service keyring\n');
    expect(r.stored).toEqual({ api_key: false, account: `default/api_key (${join(env.ROUTER_CONFIG_DIR!, 'config.json')})`, held: 'the key' });
    expect(r.fileHoldsKey).toBe(false);

    expect(r.status.code).toBe(0);
    expect(r.status.stdout).toContain(`key\tsk-rt-…${t.apiKey.slice(-4)} from the keychain (api_key of profile "default")\nkept in\tthe Secret Service keyring\nchecked\taccepted by GET /v1/key\n`);
    expect(JSON.parse(r.statusJson.stdout)).toMatchObject({ key_store: 'keychain', key_location: 'the Secret Service keyring' });
    expect(r.chat).toMatchObject({ code: 0, stdout: 'from the keychain\n' });
    expect(r.kit).toEqual({ said: 'from the kit' });
    expect(r.kitBusless).toMatchObject({ code: 'key_unavailable', message: expect.stringContaining('which cannot be read: no D-Bus session: DBUS_SESSION_BUS_ADDRESS is not set'), printedKey: false });
    // A program whose own environment has no session, given one in env: the key read there (in a child of that env).
    expect(r.kitEnvBus).toEqual({ code: 0, stdout: 'from the env given', printedKey: false });
    expect(r.get).toMatchObject({ code: 0, stdout: `sk-rt-…${t.apiKey.slice(-4)}\n` });
    expect(JSON.parse(r.list.stdout).profiles[0]).toMatchObject({ api_key: null, api_key_in: 'keychain' });

    expect(r.fileLogin.code).toBe(0);
    expect(r.beforeMigrate).toEqual({ api_key: true });
    expect(JSON.parse(r.migrate.stdout)).toMatchObject({ keychain: 'the Secret Service keyring', moved: [{ profile: 'old', key: 'api_key' }] });
    expect(r.afterMigrate).toMatchObject({ api_key: false, held: 'the key', fileHoldsKey: false });
    expect(r.migrateAgain.stderr).toContain('no key left in');
    expect(r.unset.code).toBe(0);
    expect(r.afterUnset).toEqual({ held: 'none', account: null });

    expect(r.gone.code).toBe(3);
    expect(r.kitGone).toMatchObject({ code: 'key_unavailable', message: expect.stringMatching(/^the api_key of profile "default" was kept in the Secret Service keyring, which no longer has it/) });
    expect(r.gone.stderr).toBe('error: the api_key of profile "default" was kept in the Secret Service keyring, which no longer has it: store it again: router login --profile default\n');
    expect(r.relogin.code).toBe(0);
    expect(r.deleteProfile.code).toBe(0);
    expect(r.afterDelete).toEqual({ held: 'none' });
  });
});
