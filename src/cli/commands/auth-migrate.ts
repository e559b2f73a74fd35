/** `router auth migrate`: the keys kept in the config file moved into the operating system's keychain. */
import { defineCommand } from '../define.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import { jsonFlags } from '../setup-flags.js';
import { noProfile, store } from './config/shared.js';
import type { KeyField } from '../../config/fields.js';

export const migrate = defineCommand({
  name: 'migrate',
  summary: 'move the keys kept in the config file into the keychain (Secret Service, macOS Keychain, Windows Credential Manager)',
  description:
    'Move every API key and management key kept in the config file into the operating system\'s keychain (of every profile, or of --profile NAME); the file then only says where each is. Exit 1, nothing moved, when there is no keychain to use. See docs/keys.md.',
  flags: {
    profile: { flags: '--profile <name>', help: 'only this profile (default: every profile)' },
    ...jsonFlags('print {keychain, file, moved: [{profile, key}]}'),
  },
  examples: ['router auth migrate', 'router auth migrate --profile work --json'],
  run: async ({ io, opts, flags, signal }) => {
    const { keychainName, keychainOff } = await import('../../config/keychain.js');
    const { saveKey } = await import('../../config/key-store.js');
    if (keychainOff(io.env)) throw usage('ROUTER_KEYCHAIN is off: unset it to move keys into the keychain');
    const s = await store(io);
    const only = opts.profile || flags.profile;
    if (only && !s.get(only)) throw noProfile(only, s.names());
    const moved: { profile: string; key: KeyField }[] = [];
    for (const profile of only ? [only] : s.names()) {
      for (const key of ['api_key', 'management_key'] as const) {
        const value = s.get(profile)?.[key];
        if (value === undefined) continue;
        const saved = await saveKey(s, profile, key, value, io.env, signal);
        if (saved.where === 'file') {
          const done = moved.length ? ` (${moved.length} moved before it)` : '';
          throw new CliError(`cannot move the ${key} of profile "${profile}" into ${keychainName()}: ${saved.why}; it stays in ${s.path}${done}`, EXIT.FAILURE);
        }
        moved.push({ profile, key });
        io.info(`moved the ${key} of profile "${profile}" into ${keychainName()}`);
      }
    }
    if (opts.json) return io.json({ keychain: keychainName(), file: s.path, moved });
    if (!moved.length) io.info(`no key left in ${s.path} to move${only ? ` (profile "${only}")` : ''}`);
    else io.info(`${s.path} now holds no key of ${only ? `profile "${only}"` : 'any profile'}, only where each is kept`);
  },
});
