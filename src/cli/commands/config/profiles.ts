/** `router config list|use|delete|path`: the profiles themselves and where they are kept. */
import { defineCommand } from '../../define.js';
import { jsonFlags } from '../../flags/setup-flags.js';
import { noProfile, readStore, store } from './shared.js';
import { fromEnv } from '../../../config/settings.js';
import { PROFILE_FIELDS, SECRET_FIELDS, type ProfileField } from '../../../config/fields.js';

const PROFILE = { name: '<profile>', help: '', complete: 'profiles' } as const;

export const list = defineCommand({
  name: 'list',
  jsonFields: ['current', 'path', 'profiles'],
  summary: 'list profiles (keys masked); * marks the current one',
  flags: jsonFlags('print the profiles as JSON'),
  notes: 'Piped, one tab-separated line per profile: * for the current one (else empty), profile, api key (masked), api root, model.',
  examples: ['router config list', 'router config list --json current,profiles'],
  run: async ({ io, opts }) => {
    const { maskKey, shownValue } = await import('../../../config/settings.js');
    const s = await readStore(io);
    const current = s.current();
    // Every setting a profile can hold: keys masked, a URL (API root, MCP server) without its user info.
    // A key router knows written into another setting (an mcp line's --key) is **** as everywhere it prints.
    const { withKnownKeysHidden } = await import('../../../config/known-keys.js');
    const shown = (field: ProfileField, value: string | undefined) => (value === undefined ? null : SECRET_FIELDS.includes(field) ? maskKey(value) || null : withKnownKeysHidden(shownValue(value), io.env));
    const { keyPlace } = await import('../../../config/key-store.js');
    // A key kept in the keychain or given by a command is not read to be listed: where it is says enough.
    const rows = s.names().map((name) => {
      const p = s.get(name)!;
      const where = { api_key_in: keyPlace(p, 'api_key') ?? null, management_key_in: keyPlace(p, 'management_key') ?? null };
      const fields = Object.fromEntries(PROFILE_FIELDS.map((f) => [f, shown(f, p[f])])) as Record<ProfileField, string | null>;
      return { name, current: name === current, ...fields, ...where };
    });
    if (opts.json) return io.json({ current, path: s.path, profiles: rows });
    if (rows.length === 0) {
      io.info('no profiles yet: run "router login"');
      return;
    }
    const { table } = await import('../../io/table.js');
    io.out(
      table(io, ['', 'profile', 'api key', 'api root', 'model'], rows.map((r) => [r.current ? '*' : '', r.name, r.api_key_in === 'file' || !r.api_key_in ? (r.api_key ?? '') : `(${r.api_key_in})`, r.api_root ?? '', r.model ?? ''])),
    );
  },
});

export const use = defineCommand({
  name: 'use',
  summary: 'make a profile the current one',
  args: [PROFILE],
  examples: ['router config set model local/echo --profile scratch', 'router config use scratch', 'router config list'],
  run: async ({ io }, name) => {
    const s = await store(io);
    if (!s.get(name)) throw noProfile(name, s.names());
    s.use(name);
    io.info(`now using profile "${name}"`);
    const named = fromEnv(io.env, 'ROUTER_PROFILE');
    if (named !== undefined && named !== name) io.info(`ROUTER_PROFILE is set (${named}) and goes before it`);
  },
});

export const remove = defineCommand({
  name: 'delete',
  summary: 'delete a profile',
  args: [PROFILE],
  examples: ['router config set model local/echo --profile scratch', 'router config delete scratch'],
  run: async ({ io }, name) => {
    const s = await store(io);
    const accounts = (['api_key_keychain', 'management_key_keychain'] as const).map((f) => s.get(name)?.[f]).filter((a): a is string => a !== undefined);
    if (!s.delete(name)) throw noProfile(name, s.names());
    const { forgetEntry } = await import('../../../config/key-store.js');
    for (const account of accounts) {
      const problem = await forgetEntry(account, io.env);
      if (problem) io.note(`warning: ${problem}`);
    }
    io.info(`deleted profile "${name}"${accounts.length ? ' and its keys in the keychain' : ''}`);
  },
});

export const path = defineCommand({
  name: 'path',
  summary: 'print where the config file is',
  examples: ['router config path', 'ls -l "$(router config path)"'],
  run: async ({ io }) => {
    // Where it is, whether or not it can be read (a file where its folder would go is for `config list` to say).
    const { profilesPath } = await import('../../../config/profile-file.js');
    io.out(`${profilesPath(io.env.ROUTER_CONFIG_DIR, io.env)}\n`);
  },
});
