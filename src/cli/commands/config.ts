import type { Command } from '../commander.js';
import { action, readAll, type RunContext } from '../run.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import type { IO } from '../io.js';
import { checkApiRoot } from '../../config/settings.js';

import { PROFILE_FIELDS as FIELDS, SECRET_FIELDS, SettingsError, type ProfileField as Field } from '../../config/fields.js';
import { isModelId, MODEL_ID_SYNTAX } from '../../client/facts.js';

const SECRET: readonly string[] = SECRET_FIELDS;

interface ProfileOpt {
  profile?: string;
  json?: boolean;
}

function field(name: string): Field {
  if (!(FIELDS as readonly string[]).includes(name)) throw usage(`unknown setting "${name}": use one of ${FIELDS.join(', ')}`);
  return name as Field;
}

async function store(io: IO) {
  const { ProfileStore } = await import('../../config/profiles.js');
  try {
    return new ProfileStore(io.env.ROUTER_CONFIG_DIR);
  } catch (err) {
    if (err instanceof SettingsError) throw new CliError(err.message, EXIT.USAGE);
    throw err;
  }
}

/** The profile a config command writes or reads: --profile, then the global flag, then ROUTER_PROFILE, then the current one. */
function profileFor(io: IO, s: { current(): string }, opts: ProfileOpt, flags: { profile?: string }): string {
  return opts.profile || flags.profile || io.env.ROUTER_PROFILE || s.current();
}

function checkModel(value: string, flag = 'model'): string {
  if (!isModelId(value)) throw usage(`${flag} must look like ${MODEL_ID_SYNTAX}, got "${value}"`);
  return value;
}

/** Reads a secret without putting it on the command line: hidden prompt on a TTY, else stdin. */
async function readSecret(io: IO, label: string): Promise<string> {
  let value: string;
  if (io.stdinTTY) {
    if (!io.canPrompt) throw usage(`--no-input: pipe the ${label.toLowerCase()} on stdin instead of typing it`);
    const { password } = await import('@inquirer/prompts');
    value = await password({ message: label, mask: '*' }, { input: io.stdin, output: io.stderr });
  } else {
    value = await readAll(io.stdin);
  }
  value = value.trim();
  if (!value) throw usage(`no ${label.toLowerCase()} given (pipe it on stdin, e.g. router login --with-key < key.txt)`);
  if (/\s/.test(value)) throw usage(`${label.toLowerCase()} must not contain white space`);
  return value;
}

function checkRoot(value: string, from = 'api_root'): string {
  try {
    return checkApiRoot(value, from);
  } catch (err) {
    throw usage((err as Error).message);
  }
}

export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .summary('manage profiles: API key, API root, default model')
    .description('Manage named profiles. Keys are stored in a private (0600) file and are never printed in full.')
    .addHelpText(
      'after',
      `
Settings: ${FIELDS.join(', ')}
Precedence: flags (--profile, --api-root, --model) > environment (ROUTER_PROFILE, ROUTER_API_KEY,
ROUTER_MANAGEMENT_KEY, ROUTER_API_ROOT, ROUTER_MODEL) > the profile.

Examples:
  $ router config set api_root "$ROUTER_API_ROOT"
  $ router config set api_key < key.txt
  $ router config list --json`,
    );

  registerConfigInit(config);

  config
    .command('set')
    .description('set a setting of a profile; a key is read from stdin (or a hidden prompt) when VALUE is left out')
    .argument('<setting>', FIELDS.join(' | '))
    .argument('[value]', 'the value (leave out for keys)')
    .option('-p, --profile <name>', 'profile (default: the current one)')
    .addHelpText('after', '\nExamples:\n  $ router config set model local/lorem\n  $ printf %s "$ROUTER_API_KEY" | router config set api_key --profile work')
    .action(
      action<ProfileOpt, [string, string | undefined]>(async ({ io, opts, flags }, name, value) => {
        const f = field(name);
        if (f === 'api_root' && value !== undefined) value = checkRoot(value);
        if (f === 'model' && value !== undefined) checkModel(value);
        if (SECRET.includes(f) && value !== undefined) {
          // Secrets never on the command line (clig.dev): it stays in shell history and `ps`.
          throw usage(`${f} is not taken as an argument (it would stay in your shell history): pipe it, e.g. printf %s "$KEY" | router config set ${f}`);
        }
        if (value === undefined) {
          if (!SECRET.includes(f)) throw usage(`missing value for ${f}`);
          value = await readSecret(io, f === 'api_key' ? 'API key' : 'Management key');
        }
        const s = await store(io);
        const profile = profileFor(io, s, opts, flags);
        s.set(profile, f, value);
        io.info(`set ${f} of profile "${profile}"`);
      }),
    );

  config
    .command('get')
    .description('print one setting (keys masked)')
    .argument('<setting>', FIELDS.join(' | '))
    .option('-p, --profile <name>', 'profile (default: the current one)')
    .option('--json', 'print {"profile", "setting", "value"}')
    .action(
      action<ProfileOpt, [string]>(async ({ io, opts, flags }, name) => {
        const f = field(name);
        const { maskKey } = await import('../../config/settings.js');
        const s = await store(io);
        const profile = profileFor(io, s, opts, flags);
        const raw = s.get(profile)?.[f];
        if (raw === undefined) throw new CliError(`${f} is not set in profile "${profile}"`, EXIT.NOT_FOUND);
        const value = SECRET.includes(f) ? maskKey(raw) : raw;
        if (opts.json) io.json({ profile, setting: f, value });
        else io.out(`${value}\n`);
      }),
    );

  config
    .command('list')
    .description('list profiles (keys masked); * marks the current one')
    .option('--json', 'print the profiles as JSON')
    .action(
      action<ProfileOpt>(async ({ io, opts }) => {
        const { maskKey } = await import('../../config/settings.js');
        const s = await store(io);
        const current = s.current();
        const rows = s.names().map((name) => {
          const p = s.get(name)!;
          return {
            name,
            current: name === current,
            api_key: maskKey(p.api_key) || null,
            management_key: maskKey(p.management_key) || null,
            api_root: p.api_root ?? null,
            model: p.model ?? null,
          };
        });
        if (opts.json) return io.json({ current, path: s.path, profiles: rows });
        if (rows.length === 0) {
          io.info('no profiles yet: run "router login"');
          return;
        }
        const { table } = await import('../table.js');
        io.out(
          table(io, ['', 'profile', 'api key', 'api root', 'model'], rows.map((r) => [r.current ? '*' : '', r.name, r.api_key ?? '', r.api_root ?? '', r.model ?? ''])),
        );
      }),
    );

  config
    .command('use')
    .description('make a profile the current one')
    .argument('<profile>')
    .action(
      action<ProfileOpt, [string]>(async ({ io }, name) => {
        const s = await store(io);
        if (!s.get(name)) throw new CliError(`no profile "${name}" (see router config list)`, EXIT.NOT_FOUND);
        s.use(name);
        io.info(`now using profile "${name}"`);
      }),
    );

  config
    .command('delete')
    .description('delete a profile')
    .argument('<profile>')
    .action(
      action<ProfileOpt, [string]>(async ({ io }, name) => {
        const s = await store(io);
        if (!s.delete(name)) throw new CliError(`no profile "${name}"`, EXIT.NOT_FOUND);
        io.info(`deleted profile "${name}"`);
      }),
    );

  config
    .command('path')
    .description('print where the config file is')
    .action(
      action(async ({ io }) => {
        io.out(`${(await store(io)).path}\n`);
      }),
    );
}

interface LoginOpts {
  profile?: string;
  withKey?: boolean;
  verify?: boolean;
  apiRoot?: string;
  model?: string;
}

export function registerLogin(program: Command): void {
  program
    .command('login')
    .summary('store an API key in a profile')
    .description('Store an API key in a profile: asked with a hidden prompt on a TTY, or read from stdin with --with-key, so it never lands in shell history. The key is checked against the service first.')
    .option('-p, --profile <name>', 'profile to write (default: the current one)')
    .option('--with-key', 'read the key from stdin')
    .option('--api-root <url>', 'API root to store with it, e.g. http://127.0.0.1:8080/api')
    .option('-m, --model <id>', 'default model to store with it')
    .option('--no-verify', 'save the key without checking it against the service')
    .addHelpText('after', '\nExamples:\n  $ router login\n  $ router login --with-key --profile local --api-root "$ROUTER_API_ROOT" < key.txt')
    .action(action<LoginOpts>(runLogin));
}

async function runLogin({ io, opts, flags }: RunContext<LoginOpts>): Promise<void> {
  if (!opts.withKey && !io.stdinTTY) throw usage('stdin is not a terminal: use --with-key and pipe the key on stdin');
  const root = opts.apiRoot ?? flags.apiRoot;
  const apiRoot = root ? checkRoot(root, opts.apiRoot !== undefined ? '--api-root' : 'api_root') : undefined;
  if (opts.model !== undefined) checkModel(opts.model, '--model');
  const key = await readSecret(io, 'API key');
  io.addSecret(key);
  const s = await store(io);
  const profile = profileFor(io, s, opts, flags);
  if (opts.verify !== false) await verifyKey(io, key, apiRoot ?? io.env.ROUTER_API_ROOT ?? s.get(profile)?.api_root, flags);
  s.set(profile, 'api_key', key);
  if (apiRoot) s.set(profile, 'api_root', apiRoot);
  if (opts.model) s.set(profile, 'model', opts.model);
  if (!s.names().includes(s.current())) s.use(profile);
  io.info(`saved the key in profile "${profile}" (${s.path})`);
}

/** One cheap authenticated call (a one-item batch listing): a refused key is never saved. */
async function verifyKey(io: IO, key: string, apiRoot: string | undefined, flags: { timeout?: number }): Promise<void> {
  const { RouterClient, APIError, ConnectionError } = await import('../../client/index.js');
  const client = new RouterClient({ apiKey: key, apiRoot, maxRetries: 1, timeoutMs: (flags.timeout ?? 30) * 1000 });
  try {
    await client.batches.list({ limit: 1 });
  } catch (err) {
    const where = client.core.apiRoot;
    if (err instanceof APIError && (err.status === 401 || err.status === 403)) {
      throw new CliError(`${where} refused the key (${err.status}): nothing saved`, EXIT.AUTH);
    }
    if (err instanceof ConnectionError) {
      throw new CliError(`could not reach ${where} to check the key (${err.message}): nothing saved; give --api-root, or --no-verify to save it unchecked`, EXIT.NETWORK);
    }
    throw err;
  } finally {
    await client.close();
  }
}

export function registerConfigInit(config: Command): void {
  config
    .command('init')
    .description('set up a profile interactively: API root, key (hidden) and default model')
    .option('-p, --profile <name>', 'profile to write (default: the current one)')
    .addHelpText('after', '\nExamples:\n  $ router config init\n  $ router config init --profile local')
    .action(
      action<ProfileOpt>(async ({ io, opts, flags }) => {
        if (!io.canPrompt) throw usage('config init asks questions and needs a terminal; use "router config set" or "router login --with-key" in scripts');
        const { input, password } = await import('@inquirer/prompts');
        const s = await store(io);
        const profile = profileFor(io, s, opts, flags);
        const current = s.get(profile) ?? {};
        const out = { input: io.stdin, output: io.stderr };
        const apiRoot = await input({ message: 'API root', default: current.api_root ?? 'https://openrouter.ai/api', validate: (v) => { try { checkRoot(v); return true; } catch (e) { return (e as Error).message; } } }, out);
        const key = await password({ message: current.api_key ? 'API key (empty keeps the stored one)' : 'API key', mask: '*' }, out);
        const model = await input({ message: 'Default model (<author>/<slug>, empty for none)', default: current.model ?? '', validate: (v) => v === '' || isModelId(v) || `must look like ${MODEL_ID_SYNTAX}` }, out);
        s.set(profile, 'api_root', checkRoot(apiRoot));
        if (key.trim()) s.set(profile, 'api_key', key.trim());
        else if (!current.api_key) throw usage('no API key given');
        if (model) s.set(profile, 'model', model);
        if (!s.names().includes(s.current())) s.use(profile);
        io.info(`saved profile "${profile}" (${s.path})`);
      }),
    );
}
