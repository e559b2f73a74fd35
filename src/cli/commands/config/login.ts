/** `router login`: an API key checked against the service, then stored in a profile. */
import { defineCommand } from '../../define.js';
import type { RunContext } from '../../run.js';
import type { FlagValues } from '../../flags/flags.js';
import { CliError, EXIT, usage } from '../../exit-codes.js';
import { checkModel } from '../../flags/options.js';
import { WRITTEN_PROFILE_FLAGS } from '../../flags/setup-flags.js';
import { checkRoot, profileFor, readSecret, sayStored, store } from './shared.js';
import { saveKey } from '../../../config/key-store.js';
import { checkNewProfile } from '../../../config/fields.js';
import { checkKey, keySummary } from '../../service/key-check.js';

const FLAGS = {
  ...WRITTEN_PROFILE_FLAGS,
  withKey: { flags: '--with-key', help: 'read the key from stdin' },
  apiRoot: { flags: '--api-root <url>', help: 'API root to store with it, e.g. http://127.0.0.1:8080/api' },
  model: { flags: '-m, --model <id>', help: 'default model to store with it', complete: 'chat-models' },
  verify: { flags: '--no-verify', help: 'save the key without checking it against the service' },
} as const;

export const login = defineCommand({
  name: 'login',
  summary: 'store an API key in a profile',
  description:
    'Store an API key in a profile: asked with a hidden prompt on a TTY, or read from stdin with --with-key, so it never lands in shell history. The key is checked against the service first (GET /v1/key), and its label and limits shown. It is kept in the operating system\'s keychain where there is one (Secret Service, macOS Keychain, Windows Credential Manager), else in the private (0600) config file, as the line after it says; ROUTER_KEYCHAIN=off keeps it in the file. See docs/keys.md.',
  flags: FLAGS,
  examples: ['router login', 'router login --with-key --profile local \\\n--api-root "$ROUTER_API_ROOT" < key.txt'],
  run: runLogin,
});

async function runLogin({ io, opts, flags }: RunContext<FlagValues<typeof FLAGS>>): Promise<void> {
  if (!opts.withKey && !io.stdinTTY) throw usage('stdin is not a terminal: use --with-key and pipe the key on stdin');
  const root = opts.apiRoot ?? flags.apiRoot;
  const apiRoot = root ? checkRoot(root, opts.apiRoot !== undefined ? '--api-root' : 'api_root') : undefined;
  if (opts.model !== undefined) checkModel(opts.model, '--model');
  const s = await store(io);
  const profile = profileFor(io, s, opts, flags);
  checkNewProfile(profile, s.names());
  const key = await readSecret(io, 'API key');
  io.addSecret(key);
  const { fromEnv, withoutUserinfo } = await import('../../../config/settings.js');
  const envRoot = apiRoot ? undefined : fromEnv(io.env, 'ROUTER_API_ROOT');
  const checked = opts.verify !== false ? await verifyKey(key, apiRoot ?? envRoot ?? s.get(profile)?.api_root, flags, io.env) : undefined;
  if (apiRoot) s.set(profile, 'api_root', apiRoot);
  if (opts.model) s.set(profile, 'model', opts.model);
  await sayStored(io, await saveKey(s, profile, 'api_key', key, io.env, io.interrupt), profile, 'api_key', s.get(profile));
  if (!s.names().includes(s.current())) s.use(profile);
  if (checked?.info) io.info(keySummary(checked.info));
  // Checked against the environment's root, the key works with it; the profile alone would send it elsewhere:
  // a fact the user needs, said piped too (a script's next run without ROUTER_API_ROOT would be refused).
  if (checked && envRoot && !s.get(profile)?.api_root) {
    io.note(`the key was checked against ${withoutUserinfo(envRoot)} (ROUTER_API_ROOT), which profile "${profile}" does not keep: give --api-root "$ROUTER_API_ROOT" to keep it`);
  }
}

/** The key checked before it is saved (a refused key never is); what the service says of it, when it says. */
async function verifyKey(key: string, apiRoot: string | undefined, flags: { timeout?: number }, env: NodeJS.ProcessEnv) {
  const { RouterClient, ConnectionError, DEFAULT_API_ROOT } = await import('../../../client/index.js');
  const { proxyFromEnv } = await import('../../../config/proxy.js');
  const proxy = proxyFromEnv(env, apiRoot ?? DEFAULT_API_ROOT);
  const client = new RouterClient({ apiKey: key, apiRoot, maxRetries: 1, timeoutMs: (flags.timeout ?? 30) * 1000, proxy });
  try {
    return await checkKey(client, ': nothing saved');
  } catch (err) {
    if (err instanceof ConnectionError) {
      throw new CliError(`could not reach ${client.core.apiRoot} to check the key (${err.message}): nothing saved; give --api-root, or --no-verify to save it unchecked`, EXIT.NETWORK);
    }
    throw err;
  } finally {
    await client.close();
  }
}
