/** `router auth migrate`: the keys kept in the config file moved into the operating system's keychain. */
import { existsSync } from 'node:fs';
import { defineCommand } from '../define.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import { jsonFlags } from '../flags/setup-flags.js';
import { noProfile, readStore, store } from './config/shared.js';
import type { KeyField } from '../../config/fields.js';

export const migrate = defineCommand({
  name: 'migrate',
  jsonFields: ['keychain', 'file', 'moved'],
  summary: 'move the keys in the config file into the keychain',
  description:
    'Move every API key and management key kept in the config file into the operating system\'s keychain (of every profile, or of --profile NAME); the file then only says where each is (--dry-run first shows which would move). Exit 1, nothing moved, when there is no keychain to use; exit 2 with keys to move and ROUTER_KEYCHAIN=off. See docs/keys.md.',
  flags: {
    profile: { flags: '--profile <name>', help: 'only this profile (default: every profile)', complete: 'profiles' },
    dryRun: { flags: '--dry-run', help: 'say which keys would move, and move none' },
    ...jsonFlags('print {keychain, file, moved: [{profile, key}]} (with --dry-run: the keys that would move)'),
  },
  examples: ['router auth migrate --dry-run', 'router auth migrate --dry-run --json'],
  run: async ({ io, opts, flags, signal }) => {
    const { keychainName, keychainOff } = await import('../../config/keychain.js');
    const { saveKey } = await import('../../config/key-store.js');
    // Read without writing: a dry run, or a file with no key in it, leaves the config file as it is (or absent).
    const s = await readStore(io);
    const only = opts.profile || flags.profile;
    if (only && !s.get(only)) throw noProfile(only, s.names());
    const inFile = (only ? [only] : s.names()).flatMap((profile) => (['api_key', 'management_key'] as const).filter((key) => s.get(profile)?.[key] !== undefined).map((key) => ({ profile, key })));
    const moved: { profile: string; key: KeyField }[] = [];
    const OFF = 'ROUTER_KEYCHAIN is off: unset it to move keys into the keychain';
    const off = inFile.length > 0 && keychainOff(io.env);
    if (off && !opts.dryRun) throw usage(OFF);
    // A dry run says what the run would do: with the keychain off, its refusal, not keys that "would move".
    if (off) io.note(`note: ${OFF}; no key would move (router auth migrate is refused, exit 2)`);
    // The store that writes (conf, which makes the file as it opens it) only when a key is to move.
    const writable = opts.dryRun || !inFile.length ? undefined : await store(io);
    for (const { profile, key } of inFile) {
      if (!writable) break;
      const saved = await saveKey(writable, profile, key, writable.get(profile)![key]!, io.env, signal);
      if (saved.where === 'file') {
        const done = moved.length ? ` (${moved.length} moved before it)` : '';
        throw new CliError(`cannot move the ${key} of profile "${profile}" into ${keychainName()}: ${saved.why}; it stays in ${s.path}${done}`, EXIT.FAILURE);
      }
      moved.push({ profile, key });
      io.info(`moved the ${key} of profile "${profile}" into ${keychainName()}`);
    }
    if (opts.json) return io.json({ keychain: keychainName(), file: s.path, moved: opts.dryRun && !off ? inFile : moved });
    // What a dry run finds is its answer: said piped too, as every --dry-run does.
    const say = opts.dryRun ? io.note.bind(io) : io.info.bind(io);
    if (opts.dryRun && !off) for (const { profile, key } of inFile) say(`would move the ${key} of profile "${profile}" into ${keychainName()}`);
    // No file at all (a fresh home) is said as such: "left in" a file that is not there would send one looking for it.
    if (!inFile.length) say(existsSync(s.path) ? `no key left in ${s.path} to move${only ? ` (profile "${only}")` : ''}` : `no key to move: there is no config file (${s.path}) yet; router login keeps a key`);
    else if (!opts.dryRun) io.info(`${s.path} now holds no key of ${only ? `profile "${only}"` : 'any profile'}, only where each is kept`);
  },
});
