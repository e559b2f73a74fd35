// Run by test/e2e/keychain.test.ts inside `dbus-run-session`, after gnome-keyring-daemon is unlocked:
// router's keys through a real Secret Service. Prints one JSON report; never the key itself.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AsyncEntry } from '@napi-rs/keyring';

const [bin, keyFile] = process.argv.slice(2);
const key = readFileSync(keyFile, 'utf8');
const configPath = join(process.env.ROUTER_CONFIG_DIR, 'config.json');
const run = (args, { input, env } = {}) => {
  const r = spawnSync(process.execPath, [bin, ...args], { input: input ?? '', env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, printedKey: (r.stdout + r.stderr).includes(key) };
};
const profile = (name) => JSON.parse(readFileSync(configPath, 'utf8')).profiles[name];
/** What the Secret Service holds under the account the config file names: the key (true), something else, or nothing. */
const held = async (account) => {
  if (!account) return 'no account';
  const v = await new AsyncEntry('router-cli', account, { linux: { store: 'secret-service' } }).getPassword();
  return v === null ? 'none' : v === key ? 'the key' : 'another value';
};

const report = {};
report.login = run(['--verbose', 'login', '--with-key'], { input: key });
const stored = profile('default');
report.stored = { api_key: stored.api_key !== undefined, account: stored.api_key_keychain, held: await held(stored.api_key_keychain) };
report.fileHoldsKey = readFileSync(configPath, 'utf8').includes(key);
report.status = run(['auth', 'status']);
report.statusJson = run(['auth', 'status', '--json']);
report.chat = run(['chat', '-m', 'local/echo', 'from the keychain']);
// The kit's clientFromProfile() reads the same entry, as router chat does; one the keychain lacks: key_unavailable.
const kit = await import(join(bin, '..', '..', 'dist', 'kit', 'index.js'));
const kitAsk = async (profile, env) => {
  try {
    const said = (await kit.chatModel(await kit.clientFromProfile({ profile, env }), 'local/echo').prompt('from the kit')).text;
    return { said };
  } catch (err) {
    return { code: err.code, message: err.message, printedKey: String(err.message).includes(key) };
  }
};
report.kit = await kitAsk('default');
// The D-Bus session is the one of the env given, as every other variable is: not this process's (was read from process.env).
const { DBUS_SESSION_BUS_ADDRESS: bus, ...busless } = process.env;
report.kitBusless = await kitAsk('default', busless);
const program = `const kit = await import(${JSON.stringify(join(bin, '..', '..', 'dist', 'kit', 'index.js'))});
const env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: process.env.KIT_BUS };
const client = await kit.clientFromProfile({ env }).catch((err) => ({ err }));
process.stdout.write(client.err ? 'error: ' + client.err.message : (await kit.chatModel(client, 'local/echo').prompt('from the env given')).text);`;
const child = spawnSync(process.execPath, ['--input-type=module', '-e', program], { env: { ...busless, KIT_BUS: bus }, encoding: 'utf8' });
report.kitEnvBus = { code: child.status, stdout: child.stdout, printedKey: (child.stdout + child.stderr).includes(key) };
report.get = run(['config', 'get', 'api_key']);
report.list = run(['config', 'list', '--json']);
// A key saved to the file (ROUTER_KEYCHAIN=off), then moved.
report.fileLogin = run(['login', '--with-key', '--profile', 'old'], { input: key, env: { ROUTER_KEYCHAIN: 'off' } });
report.beforeMigrate = { api_key: profile('old').api_key === key };
report.migrate = run(['auth', 'migrate', '--json']);
const old = profile('old');
report.afterMigrate = { api_key: old.api_key !== undefined, account: old.api_key_keychain, held: await held(old.api_key_keychain), fileHoldsKey: readFileSync(configPath, 'utf8').includes(key) };
report.migrateAgain = run(['--verbose', 'auth', 'migrate']);
report.unset = run(['config', 'unset', 'api_key', '--profile', 'old']);
report.afterUnset = { held: await held(old.api_key_keychain), account: profile('old').api_key_keychain ?? null };
// The entry removed behind router's back: one line, exit 3.
await new AsyncEntry('router-cli', stored.api_key_keychain, { linux: { store: 'secret-service' } }).deleteCredential();
report.gone = run(['auth', 'status']);
report.kitGone = await kitAsk('default');
report.relogin = run(['login', '--with-key'], { input: key });
report.deleteProfile = run(['config', 'delete', 'default']);
report.afterDelete = { held: await held(profile('default')?.api_key_keychain ?? stored.api_key_keychain) };
process.stdout.write(JSON.stringify(report));
