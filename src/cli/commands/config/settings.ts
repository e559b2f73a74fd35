/** `router config set`, `get` and `unset`: one setting of a profile. */
import { defineCommand } from '../../define.js';
import { CliError, EXIT, usage } from '../../exit-codes.js';
import { MODEL_FIELDS } from '../../../config/fields.js';
import { readAliases } from '../../../kit/model-aliases.js';
import { checkModel } from '../../flags/options.js';
import { usdText } from '../../../kit/spend/budget.js';
import { jsonFlags, PROFILE_FLAGS } from '../../flags/setup-flags.js';
import { checkRoot, existingProfileFor, field, FIELDS, profileFor, readSecret, sayOverridden, readStore, sayStored, SECRET, store, storedKey, type Field } from './shared.js';
import { checkBatchesPath, checkNewProfile, SettingsError } from '../../../config/fields.js';
import { checkAttribution } from '../../../config/attribution.js';
import type { IO } from '../../io/io.js';
import { visible } from '../../../internal/visible.js';

const SETTING = { name: '<setting>', help: FIELDS.join(' | '), complete: 'settings' } as const;

export const set = defineCommand({
  name: 'set',
  summary: 'set a setting of a profile (a key from stdin)',
  description: 'set a setting of a profile; a key is read from stdin (or a hidden prompt) and kept in the keychain where there is one',
  args: [SETTING, { name: '[value]', help: 'the value (leave out for keys)' }],
  flags: PROFILE_FLAGS,
  examples: ['router config set model local/lorem', 'printf %s "$ROUTER_API_KEY" | router config set api_key --profile work', "router config set api_key_command 'pass show router' --profile work"],
  run: async ({ io, opts, flags }, name, value) => {
    const f = field(name);
    // As in the environment: spaces around a value are dropped, and a blank one is no value.
    if (!SECRET.includes(f)) value = value?.trim();
    // Most often an unset "$VAR": say how to remove a setting, which an empty one is not.
    if (value === '') throw usage(`${f} must not be empty (an unset variable?); router config unset ${f} removes it`);
    if (MODEL_FIELDS.includes(f) && value !== undefined && (value.includes('/') || !Object.hasOwn(readAliases(io.env), value))) checkModel(value, f);
    if (value !== undefined && !SECRET.includes(f)) checkText(f, value);
    if (f === 'api_root' && value !== undefined) value = checkRoot(value);
    if (f === 'log' && value !== undefined && value !== 'on' && value !== 'off') throw usage(`log is on or off, got "${value}"`);
    // Kept as typed (String() of a small amount, 1e-7, is a text the budget check would refuse), less
    // the digits past the tenth decimal, which no cost reaches: said, as the stored value differs.
    if ((f === 'daily_budget' || f === 'monthly_budget') && value !== undefined) {
      const kept = usdText(value, f);
      if (Number(kept) !== Number(value)) io.note(`note: ${f} kept as ${kept}: costs are counted to ten decimals`);
      value = kept;
    }
    if ((f === 'app_url' || f === 'app_title' || f === 'app_categories') && value !== undefined) value = checkAttribution(f, value, f);
    if (f === 'batches_path' && value !== undefined) value = checkedPath(value);
    if (SECRET.includes(f) && value !== undefined) {
      // Secrets never on the command line (clig.dev): it stays in shell history and `ps`.
      throw usage(`${f} is not taken as an argument (it would stay in your shell history): pipe it, e.g. printf %s "$KEY" | router config set ${f}`);
    }
    if (value === '') throw usage(`${f} must not be empty`);
    if (value === undefined && !SECRET.includes(f)) throw usage(`missing value for ${f}`);
    const s = await store(io);
    const profile = profileFor(io, s, opts, flags);
    checkNewProfile(profile, s.names());
    if (f === 'api_key' || f === 'management_key') {
      value = await readSecret(io, f === 'api_key' ? 'API key' : 'Management key', `printf %s "$KEY" | router config set ${f}; an unset KEY pipes nothing`);
      const { saveKey } = await import('../../../config/key-store.js');
      sayStored(io, await saveKey(s, profile, f, value, io.env, io.interrupt), profile, f, s.get(profile));
    } else {
      s.set(profile, f, value!);
      io.info(`set ${f} of profile "${profile}"`);
      if (MODEL_FIELDS.includes(f)) await sayUnlisted(io, value!.includes('/') ? value! : readAliases(io.env)[value!]!, s.get(profile)?.api_root);
      if (f === 'api_root') await (await import('./pathless-root.js')).sayPathlessRoot(io, value!);
    }
    sayOverridden(io, f);
  },
});

/** A model the kept model list does not hold: set all the same, with the nearest id said. */
async function sayUnlisted(io: IO, id: string, profileRoot: string | undefined): Promise<void> {
  const [{ unlistedNote }, { DEFAULT_API_ROOT }] = await Promise.all([import('../../service/model-hint.js'), import('../../../client/core.js')]);
  const note = await unlistedNote(io.env, id, profileRoot ?? (io.env.ROUTER_API_ROOT?.trim() || DEFAULT_API_ROOT));
  if (note) io.note(note);
}

/** What no setting holds: a control character (mcp's servers go one a line), or more text than any needs. */
function checkText(f: Field, value: string): void {
  const max = f === 'mcp' ? 65_536 : 4096;
  if (value.length > max) throw usage(`${f} is ${value.length} characters long, more than the ${max} a setting may hold`);
  const bad = (f === 'mcp' ? /(?!\n)[\x00-\x1f\x7f-\x9f]/ : /[\x00-\x1f\x7f-\x9f]/).exec(value);
  if (bad) throw usage(`${f} holds a control character (${visible(bad[0])} at ${bad.index + 1}): give it without`);
}

function checkedPath(value: string): string {
  try {
    return checkBatchesPath(value, 'batches_path');
  } catch (err) {
    throw err instanceof SettingsError ? usage(err.message) : err;
  }
}

export const get = defineCommand({
  name: 'get',
  jsonFields: ['profile', 'setting', 'value'],
  summary: 'print one setting (keys masked)',
  args: [SETTING],
  flags: { ...PROFILE_FLAGS, ...jsonFlags('print {"profile", "setting", "value"}') },
  examples: ['router config set model local/echo --profile scratch', 'router config get model --profile scratch', 'router config get model --profile scratch --json'],
  run: async ({ io, opts, flags }, name) => {
    const f = field(name);
    const { maskKey, shownValue } = await import('../../../config/settings.js');
    const s = await readStore(io);
    const profile = existingProfileFor(io, s, opts, flags);
    const raw = f === 'api_key' || f === 'management_key' ? await storedKey(s.get(profile), profile, f, io.env, io.interrupt) : s.get(profile)?.[f];
    if (raw === undefined) {
      const byCommand = s.get(profile)?.[`${f}_command` as Field] ? ` (${f}_command gives it)` : '';
      throw new CliError(`${f} is not set in profile "${profile}"${byCommand || (await import('./unset-setting.js')).whenUnset(f)}`, EXIT.NOT_FOUND);
    }
    // A key router knows written into another setting (an mcp line's --key, a model) is **** as everywhere it prints.
    const value = SECRET.includes(f) ? maskKey(raw) : (await import('../../../config/known-keys.js')).withKnownKeysHidden(shownValue(raw), io.env);
    if (opts.json) io.json({ profile, setting: f, value });
    else io.out(`${value}\n`);
    sayOverridden(io, f);
  },
});

export const unset = defineCommand({
  name: 'unset',
  summary: 'remove a setting from a profile',
  description: 'remove a setting from a profile (a budget, a default model, a key); one not set is left as it is',
  args: [SETTING],
  flags: PROFILE_FLAGS,
  examples: ['router config unset daily_budget', 'router config unset model --profile work'],
  run: async ({ io, opts, flags }, name) => {
    const f = field(name);
    const s = await store(io);
    const profile = existingProfileFor(io, s, opts, flags);
    const key = f === 'api_key' || f === 'management_key' ? f : undefined;
    const { keyPlace, forgetKey } = await import('../../../config/key-store.js');
    const place = key ? keyPlace({ ...s.get(profile), [`${key}_command`]: undefined }, key) : undefined;
    if (key ? place === undefined : s.get(profile)?.[f] === undefined) return io.info(`${f} was not set in profile "${profile}"`);
    if (key) {
      const problem = await forgetKey(s, profile, key, io.env);
      if (problem) io.note(`warning: ${problem}`);
    } else s.unset(profile, f);
    io.info(`unset ${f} of profile "${profile}"${place === 'keychain' ? ' (removed from the keychain)' : ''}`);
  },
});
