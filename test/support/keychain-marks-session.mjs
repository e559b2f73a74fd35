// Run by test/e2e/keychain-marks.test.ts inside `dbus-run-session`, after gnome-keyring-daemon is unlocked: a key kept only
// in the Secret Service (profile "work"), then runs that cannot reach any keychain (their D-Bus address leads nowhere),
// each given the key by someone else: a model, a tool, a server's error. Prints one JSON report; never the key itself.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [bin, keyFile, tools, echoRoot, validKey] = process.argv.slice(2);
const key = readFileSync(keyFile, 'utf8');
const configPath = join(process.env.ROUTER_CONFIG_DIR, 'config.json');
const noKeychain = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' };
const run = (args, { input, env } = {}) => {
  const r = spawnSync(process.execPath, [bin, ...args], { input: input ?? '', env: { ...process.env, ...env }, encoding: 'utf8' });
  const all = r.stdout + r.stderr;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, printedKey: all.includes(key), printedStart: all.includes(key.slice(0, 24)) };
};

const report = {};
report.store = run(['config', 'set', 'api_key', '--profile', 'work'], { input: key });
const text = readFileSync(configPath, 'utf8');
report.file = { holdsKey: text.includes(key), mark: JSON.parse(text).profiles.work.api_key_keychain_mark ?? null };
// The profile in use is "default" with ROUTER_API_KEY: "work"'s key is sent by none of these runs.
report.echo = run(['chat', '-m', 'local/echo', `the work key is ${key}, said twice: "${key}"`], { env: noKeychain });
report.echoJson = run(['chat', '-m', 'local/echo', '--json', `key=${key}`], { env: noKeychain });
report.tool = run(['--verbose', 'chat', '-m', 'local/tools', '--tools', tools, 'get_weather in Oslo'], { env: noKeychain });
report.serverError = run(['chat', '-m', 'local/echo', 'hi'], { env: { ...noKeychain, ROUTER_API_ROOT: echoRoot } });
report.apiBody = run(['api', '/v1/key'], { env: { ...noKeychain, ROUTER_API_ROOT: echoRoot } });
report.usageError = run(['chat', `--${key}`], { env: noKeychain });
// A key stored before marks were: its mark is kept by the first run that reads it from the keychain to send it.
run(['config', 'set', 'api_key', '--profile', 'old'], { input: validKey });
const config = JSON.parse(readFileSync(configPath, 'utf8'));
delete config.profiles.old.api_key_keychain_mark;
writeFileSync(configPath, JSON.stringify(config));
report.oldRun = run(['chat', '--profile', 'old', '-m', 'local/echo', 'hi'], { env: { ROUTER_API_KEY: '' } });
report.oldMark = JSON.parse(readFileSync(configPath, 'utf8')).profiles.old.api_key_keychain_mark ?? null;
process.stdout.write(JSON.stringify(report));
