import type { RunContext } from '../../run.js';
import { CliError, EXIT, usage } from '../../exit-codes.js';
import { MODEL_FIELDS } from '../../../config/fields.js';
import { checkModel } from '../../options.js';
import { usdAmount } from '../../budget.js';
import { checkRoot, field, profileFor, readSecret, SECRET, store, type ProfileOpt } from './shared.js';
import { checkNewProfile, shownName } from '../../../config/fields.js';
import { didYouMean } from '../../../internal/did-you-mean.js';

/** What each `router config` subcommand does; the flags are in index.ts. */
export async function runSet({ io, opts, flags }: RunContext<ProfileOpt>, name: string, value: string | undefined): Promise<void> {
  const f = field(name);
  // As in the environment: spaces around a value are dropped, and a blank one is no value.
  if (!SECRET.includes(f)) value = value?.trim();
  if (value === '') throw usage(`${f} must not be empty`);
  if (f === 'api_root' && value !== undefined) value = checkRoot(value);
  if (MODEL_FIELDS.includes(f) && value !== undefined) checkModel(value, f);
  if (f === 'log' && value !== undefined && value !== 'on' && value !== 'off') throw usage(`log is on or off, got "${value}"`);
  if ((f === 'daily_budget' || f === 'monthly_budget') && value !== undefined) value = String(usdAmount(value, f));
  if (SECRET.includes(f) && value !== undefined) {
    // Secrets never on the command line (clig.dev): it stays in shell history and `ps`.
    throw usage(`${f} is not taken as an argument (it would stay in your shell history): pipe it, e.g. printf %s "$KEY" | router config set ${f}`);
  }
  if (value === '') throw usage(`${f} must not be empty`);
  if (value === undefined && !SECRET.includes(f)) throw usage(`missing value for ${f}`);
  const s = await store(io);
  const profile = profileFor(io, s, opts, flags);
  checkNewProfile(profile, s.names());
  value ??= await readSecret(io, f === 'api_key' ? 'API key' : 'Management key');
  s.set(profile, f, value);
  io.info(`set ${f} of profile "${profile}"`);
}

export async function runGet({ io, opts, flags }: RunContext<ProfileOpt>, name: string): Promise<void> {
  const f = field(name);
  const { maskKey, withoutUserinfo } = await import('../../../config/settings.js');
  const s = await store(io);
  const profile = profileFor(io, s, opts, flags);
  const raw = s.get(profile)?.[f];
  if (raw === undefined) throw new CliError(`${f} is not set in profile "${profile}"`, EXIT.NOT_FOUND);
  const value = SECRET.includes(f) ? maskKey(raw) : f === 'api_root' ? withoutUserinfo(raw) : raw;
  if (opts.json) io.json({ profile, setting: f, value });
  else io.out(`${value}\n`);
}

export async function runList({ io, opts }: RunContext<ProfileOpt>): Promise<void> {
  const { maskKey, withoutUserinfo } = await import('../../../config/settings.js');
  const s = await store(io);
  const current = s.current();
  const rows = s.names().map((name) => {
    const p = s.get(name)!;
    return {
      name,
      current: name === current,
      api_key: maskKey(p.api_key) || null,
      management_key: maskKey(p.management_key) || null,
      api_root: p.api_root === undefined ? null : withoutUserinfo(p.api_root),
      model: p.model ?? null,
      voice: p.voice ?? null,
      speech_model: p.speech_model ?? null,
      embed_model: p.embed_model ?? null,
    };
  });
  if (opts.json) return io.json({ current, path: s.path, profiles: rows });
  if (rows.length === 0) {
    io.info('no profiles yet: run "router login"');
    return;
  }
  const { table } = await import('../../table.js');
  io.out(
    table(io, ['', 'profile', 'api key', 'api root', 'model'], rows.map((r) => [r.current ? '*' : '', r.name, r.api_key ?? '', r.api_root ?? '', r.model ?? ''])),
  );
}

function noProfile(name: string, known: string[]): CliError {
  return new CliError(`no profile "${shownName(name)}"${didYouMean(name, known)}; see router config list`, EXIT.NOT_FOUND);
}

export async function runUse({ io }: RunContext<ProfileOpt>, name: string): Promise<void> {
  const s = await store(io);
  if (!s.get(name)) throw noProfile(name, s.names());
  s.use(name);
  io.info(`now using profile "${name}"`);
}

export async function runDelete({ io }: RunContext<ProfileOpt>, name: string): Promise<void> {
  const s = await store(io);
  if (!s.delete(name)) throw noProfile(name, s.names());
  io.info(`deleted profile "${name}"`);
}

export async function runPath({ io }: RunContext<unknown>): Promise<void> {
  io.out(`${(await store(io)).path}\n`);
}
