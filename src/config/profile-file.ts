import { readLocalText } from '../internal/local-file.js';
import { join, resolve } from 'node:path';
import envPaths from 'env-paths';
import { DamagedFileError, DEFAULT_PROFILE, SettingsError, type Profile } from './fields.js';
import { isRecord } from '../internal/shape.js';
import { isBlank } from '../internal/blank.js';
import { keptFileWhy, namedFileLine } from '../internal/named-input.js';
import { xdgBase } from './xdg.js';

/**
 * The file ProfileStore keeps: config.json in env-paths' folder for router, but on Linux and the
 * like by the XDG rule (env-paths takes a relative XDG_CONFIG_HOME, that is the current folder).
 */
export function profilesPath(dir?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!isBlank(dir)) return resolve(dir, 'config.json');
  const folder = process.platform === 'darwin' || process.platform === 'win32' ? envPaths('router', { suffix: '' }).config : join(xdgBase(env, 'XDG_CONFIG_HOME', '.config'), 'router');
  return resolve(folder, 'config.json');
}

interface ProfilesShape {
  current?: string;
  profiles?: Record<string, Profile>;
}

/**
 * The profiles as ProfileStore last wrote them, read without loading conf (its schema validator
 * and semver cost every command ~70 ms): for runs that only read them. Writes go through ProfileStore.
 */
export class ProfileFile {
  readonly path: string;
  private readonly data: ProfilesShape;

  /** `env`: the run's environment (HOME and XDG_CONFIG_HOME place the file when `dir` is not given). */
  constructor(dir = process.env.ROUTER_CONFIG_DIR, env: NodeJS.ProcessEnv = process.env) {
    this.path = profilesPath(dir, env);
    let text: string | undefined;
    try {
      text = readLocalText(this.path);
    } catch (err) {
      // No file there: none yet. A file where a folder of its path would go is a mistake said in words (ENOTDIR).
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw corrupt(err, this.path);
    }
    let parsed: unknown = {};
    try {
      if (text !== undefined) parsed = JSON.parse(text);
    } catch (err) {
      throw corrupt(err, this.path);
    }
    const problem = shapeProblem(parsed);
    if (problem) throw misshapen(problem, this.path);
    this.data = parsed as ProfilesShape;
  }

  current(): string {
    return this.data.current ?? DEFAULT_PROFILE;
  }

  /** The file holds both keys (conf writes the missing ones of its defaults as it starts). */
  complete(): boolean {
    return this.data.current !== undefined && this.data.profiles !== undefined;
  }

  names(): string[] {
    return Object.keys(this.data.profiles ?? {});
  }

  get(name: string): Profile | undefined {
    return this.data.profiles?.[name];
  }
}

/** What is wrong with the shape of a parsed config file, if anything (a file edited by hand). */
export function shapeProblem(parsed: unknown): string | undefined {
  if (!isRecord(parsed)) return 'not a JSON object';
  const { current, profiles } = parsed;
  if (current !== undefined && typeof current !== 'string') return '"current" is not a profile name';
  if (profiles === undefined) return undefined;
  if (!isRecord(profiles)) return '"profiles" is not an object of profiles';
  for (const [name, p] of Object.entries(profiles)) {
    if (!isRecord(p)) return `profile "${name}" is not an object`;
    for (const [field, v] of Object.entries(p)) if (typeof v !== 'string') return `profile "${name}": ${field} is not a string`;
  }
  return undefined;
}

/** Valid JSON, but not what a config holds: names the place (profile and field names, never a value). */
export function misshapen(problem: string, file: string): Error {
  return new DamagedFileError(`${file} is not a router config (${problem}): fix it or move it away`, file);
}

/** A config file that cannot be read: name the file and the position, never echo its contents (it holds keys). */
export function corrupt(err: unknown, file: string): Error {
  const message = (err as Error)?.message ?? '';
  const where = /position (\d+)/.exec(message)?.[1] ?? /line (\d+) column (\d+)/.exec(message)?.slice(1).join(':');
  if (err instanceof SyntaxError || /JSON/.test(message)) {
    return new DamagedFileError(`${file} is not valid JSON${where ? ` (at ${/:/.test(where) ? 'line:column ' : 'position '}${where})` : ''}: fix it or move it away`, file);
  }
  const code = (err as NodeJS.ErrnoException)?.code;
  return new SettingsError(namedFileLine('config file', file, code ? keptFileWhy(code) : 'cannot read it'));
}
