/** `router auth status`: which key the settings give, where it lives, and what the service says of it (gh's name); `auth migrate`. */
import { defineCommand, defineGroup } from '../define.js';
import { jsonFlags } from '../flags/setup-flags.js';
import { checkKey, dollars, limitText } from '../service/key-check.js';
import type { Settings, Source } from '../../config/settings.js';
import type { IO } from '../io/io.js';
import { described } from '../io/described.js';
import { migrate } from './auth-migrate.js';

const status = defineCommand({
  name: 'status',
  jsonFields: ['profile', 'api_root', 'api_root_from', 'key', 'key_from', 'key_store', 'key_location', 'checked_with', 'details'],
  summary: 'check the API key in use against the service',
  description:
    'Check the API key the settings give against the service, and say where it lives: the environment, the keychain, a key command (api_key_command) or the config file. The profile, the API root and where the key comes from are printed before the check, so that they show when it fails.',
  flags: jsonFlags('print {profile, api_root, api_root_from, key, key_from, key_store, key_location, checked_with, details}'),
  examples: ['router auth status', 'router auth status --json'],
  run: async ({ io, opts, settings: read, connect }) => {
    const settings = await read();
    const { maskKey, sourceName } = await import('../../config/settings.js');
    const { DEFAULT_API_ROOT } = await import('../../client/core.js');
    const root = settings.apiRoot ?? DEFAULT_API_ROOT;
    const rootFrom = settings.from.apiRoot ? sourceName(settings.from.apiRoot) : 'the default';
    const from = settings.from.apiKey;
    const store = from ? await keyStore(io, from) : undefined;
    const rows = (key?: string): [string, string][] => [
      ['profile', settings.profile],
      ['api root', `${root} (${rootFrom === 'the default' ? 'the default: no --api-root, ROUTER_API_ROOT or api_root of the profile' : rootFrom})`],
      ['key', from ? `${key ?? '(not read)'} from ${sourceName(from)}` : 'none: set ROUTER_API_KEY, or run "router login"'],
      ...(store ? [['kept in', store.text] as [string, string]] : []),
    ];
    // What the settings say is printed before anything can fail: a missing key, a refused one, a root that cannot be reached.
    const head = (key?: string) => {
      if (!opts.json) io.out(described(io, rows(key)));
    };
    let connected;
    try {
      connected = await connect();
    } catch (err) {
      head();
      throw err;
    }
    const { client } = connected;
    const keySettings: Settings = connected.settings;
    const key = maskKey(keySettings.apiKey);
    try {
      let check;
      try {
        check = await checkKey(client, `: check the API key ${from!.kind === 'env' ? `in ${sourceName(from!)}` : `of profile "${settings.profile}"`}`);
      } catch (err) {
        head(key);
        throw err;
      }
      const { route, info } = check;
      if (opts.json) {
        return io.json({ profile: settings.profile, api_root: client.core.apiRoot, api_root_from: rootFrom, key, key_from: sourceName(from!), key_store: store!.kind, key_location: store!.location, checked_with: route, details: info ?? null });
      }
      const more: [string, string][] = [['checked', `accepted by ${route}`]];
      if (info) {
        more.push(['label', info.label], ['limit', limitText(info)], ['usage', dollars(info.usage)]);
        if (info.is_management_key) more.push(['kind', 'management key']);
        if (info.expires_at) more.push(['expires', info.expires_at]);
      } else more.push(['details', 'this service has no GET /v1/key: no label, limits or usage to show']);
      io.out(described(io, [...rows(key), ...more]));
    } finally {
      await client.close();
    }
  },
});


/** Where a key lives, in words and for --json: the environment, the file, the keychain or a command. */
async function keyStore(io: IO, from: Source): Promise<{ kind: string; location: string; text: string }> {
  if (from.kind === 'env' || from.kind === 'flag') return { kind: 'environment', location: from.name, text: `the environment (${from.name})` };
  if (from.kind === 'command') return { kind: 'command', location: from.command, text: `the output of a command, read now and kept nowhere: ${from.command}` };
  if (from.kind === 'keychain') {
    const { keychainName } = await import('../../config/keychain.js');
    return { kind: 'keychain', location: keychainName(), text: keychainName() };
  }
  const { profilesPath } = await import('../../config/profile-file.js');
  const path = profilesPath(io.env.ROUTER_CONFIG_DIR, io.env);
  return { kind: 'file', location: path, text: `the config file ${path} (0600; "router auth migrate" moves it to the keychain)` };
}

export const auth = defineGroup({
  name: 'auth',
  summary: 'check the key in use; move keys into the keychain',
  description: 'The API key in use: where it lives, is it accepted, and what are its label, limits and usage; keys moved from the config file into the keychain.',
  commands: [status, migrate],
  examples: ['router auth status', 'router auth migrate --dry-run'],
});
