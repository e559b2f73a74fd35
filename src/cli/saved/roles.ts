/**
 * Roles (aichat's and mods' roles, llm's templates): a Markdown file in the config folder's `roles/`,
 * with optional YAML front matter (any flag of the command: `model`, `temperature`, `max-tokens`, …)
 * and the system prompt as its body. Flags given on the command line win over the role; the role wins
 * over the profile.
 */
import { existsSync, readdirSync } from 'node:fs';
import { readLocalFile } from '../../internal/local-file.js';
import { namedFileLine, unreadableWhy } from '../../internal/named-input.js';
import { secretsHidden } from '../../internal/userinfo.js';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Command, Option } from '../commander.js';
import { profilesPath } from '../../config/profile-file.js';
import { CliError, EXIT, usage, type ExitCode } from '../exit-codes.js';
import { DamagedFileError } from '../../config/fields.js';
import { cliErrorOf } from '../kit-words.js';
import { utf8Text } from '../io/utf8.js';
import { isRecord } from '../../internal/shape.js';
import { looksConcise } from '../../kit/schema-dsl.js';
import { didYouMean } from '../../internal/did-you-mean.js';
import type { IO } from '../io/io.js';
import { checkGoesWithRole, type FlagSpec } from '../flags/flags.js';
import { fileArg } from '../flags/options.js';
import { CHAT_FLAGS } from '../commands/chat/flags.js';
import { RESPONSES_FLAGS } from '../commands/responses/flags.js';

export interface Role {
  name: string;
  path: string;
  /** The front matter: flag names (as written: kebab, snake or camel case) and values. */
  settings: Record<string, unknown>;
  /** The body: the system prompt ('' when the file has none). */
  system: string;
}

const NAME = /^[\w.-]{1,64}$/;

export function rolesDir(env: NodeJS.ProcessEnv): string {
  return join(dirname(profilesPath(env.ROUTER_CONFIG_DIR, env)), 'roles');
}

export function checkRoleName(name: string): string {
  if (!NAME.test(name) || name.startsWith('.')) throw usage(`role name "${name}": use 1 to 64 letters, digits, ".", "_" or "-"`);
  return name;
}

export const rolePath = (env: NodeJS.ProcessEnv, name: string) => join(rolesDir(env), `${checkRoleName(name)}.md`);

export function roleNames(env: NodeJS.ProcessEnv): string[] {
  try {
    return readdirSync(rolesDir(env)).filter((n) => n.endsWith('.md') && !n.startsWith('.')).map((n) => n.slice(0, -3)).sort();
  } catch {
    return [];
  }
}

/**
 * A role that does not exist, naming the roles there are: exit 2 where a flag names it (--role, as
 * --profile), 5 where a roles command is asked about it (as conversations show and config use).
 */
export function unknownRole(env: NodeJS.ProcessEnv, name: string, code: ExitCode = EXIT.USAGE): Error {
  const names = roleNames(env);
  // A name of one or two letters is near every short one: no guess.
  return new CliError(names.length ? `no role "${name}"${name.length > 2 ? didYouMean(name, names) : ''}; the roles are: ${names.join(', ')}` : `no role "${name}": there are no roles yet (router roles save NAME --system TEXT)`, code);
}

/** Reads a role; an unknown name is said naming the roles there are (exit 2, or `missing`). */
export function readRole(env: NodeJS.ProcessEnv, name: string, missing: ExitCode = EXIT.USAGE): Role {
  const path = rolePath(env, name);
  let text: string;
  try {
    text = utf8Text(readLocalFile(path), `role file ${path}`);
  } catch (err) {
    if (err instanceof CliError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw unknownRole(env, name, missing);
    const code = (err as NodeJS.ErrnoException).code;
    throw usage(namedFileLine('role file', path, code ? unreadableWhy(code) : (err as Error).message));
  }
  try {
    return parseRole(name, path, text);
  } catch (err) {
    // A kept role that does not parse is a damaged file, as every store's (exit 1); `roles edit` mends it.
    const detail = err instanceof CliError ? err.message.replace(`role file ${path}: `, '') : (err as Error).message;
    throw Object.assign(new DamagedFileError(`${path} is damaged (${detail}): router roles edit ${name} mends it, or move it away`, path), { detail: `${detail}; router roles edit ${name} mends it` });
  }
}

/** A role file as `roles show` prints it: a URL's user name and password in its front matter (an MCP server's) hidden. */
export function shownRoleText(text: string): string {
  const open = /^\uFEFF?---[ \t]*\r?\n/.exec(text);
  const close = open && /^---[ \t]*$/m.exec(text.slice(open[0].length));
  if (!open || !close) return text;
  const end = open[0].length + close.index;
  return text.slice(0, open[0].length) + secretsHidden(text.slice(open[0].length, end)) + text.slice(end);
}

/** A role's settings as `roles show --json` prints them: a URL's user name and password hidden. */
export function shownRoleSettings(settings: Role['settings']): Role['settings'] {
  const shown = (v: unknown): unknown => (typeof v === 'string' ? secretsHidden(v) : Array.isArray(v) ? v.map(shown) : v);
  return Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, shown(v)]));
}

/** Parses a role file; a file that does not parse is one line naming the file and the position. */
export function parseRole(name: string, path: string, text: string): Role {
  const src = text.replace(/^\uFEFF/, '');
  const open = /^---[ \t]*\r?\n/.exec(src);
  if (!open) return { name, path, settings: {}, system: src.trim() };
  const close = /^---[ \t]*$/m.exec(src.slice(open[0].length));
  if (!close) throw usage(`role file ${path}: line 1: the front matter opened by "---" is never closed by a line "---"`);
  const front = src.slice(open[0].length, open[0].length + close.index);
  const body = src.slice(open[0].length + close.index + close[0].length);
  // yaml is loaded only when a role has front matter.
  const { parseDocument } = requireYaml();
  const doc = parseDocument(front, { uniqueKeys: true });
  const problem = doc.errors[0];
  if (problem) {
    const at = problem.linePos?.[0];
    const where = at ? `line ${at.line + 1}, column ${at.col}` : 'line 2';
    throw usage(`role file ${path}: ${where}: ${problem.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  let settings: unknown;
  try {
    // Aliases that expand past yaml's bound (an alias bomb: a billion laughs) are refused by it, as a file's fault.
    settings = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (err) {
    throw usage(`role file ${path}: ${((err as Error)?.message ?? String(err)).split('\n')[0]}`);
  }
  if (!isRecord(settings)) throw usage(`role file ${path}: line 2: the front matter must be "name: value" lines`);
  return { name, path, settings, system: body.trim() };
}

let yamlModule: typeof import('yaml') | undefined;
function requireYaml(): typeof import('yaml') {
  if (!yamlModule) throw new Error('yaml not loaded');
  return yamlModule;
}

/** Loads the YAML parser (kept out of the start of every command). */
export async function loadYaml(): Promise<typeof import('yaml')> {
  return (yamlModule ??= await import('yaml'));
}

const kebab = (key: string) => key.replace(/_/g, '-').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** One role serves chat and responses: a setting named as the other command names it. */
const SAME_SETTING: Record<string, string> = { 'max-tokens': 'max-output-tokens', 'max-output-tokens': 'max-tokens' };

/** The option a front-matter key names (`stream: false` is --no-stream). */
function optionFor(cmd: Command, key: string, value: unknown): Option | undefined {
  const find = (name: string) => {
    const [first, second] = value === false ? [`--no-${name}`, `--${name}`] : [`--${name}`, `--no-${name}`];
    return cmd.options.find((o) => o.long === first) ?? cmd.options.find((o) => o.long === second);
  };
  const name = kebab(key);
  return find(name) ?? (SAME_SETTING[name] ? find(SAME_SETTING[name]) : undefined);
}

/** Keys a role file may not set: they are about the run, not the role. */
const NOT_IN_ROLES = new Set(['role', 'param', 'json', 'jq', 'interactive', 'continue', 'conversation', 'help']);

/** What the answer is printed as: a role's setting is left out where the command line gives one it cannot go with. */
const CANNOT_GO_WITH: Record<string, string[]> = {
  extract: ['extractLast', 'schema', 'schemaMulti', 'json', 'jq'],
  extractLast: ['extract', 'schema', 'schemaMulti', 'json', 'jq'],
  schema: ['schemaMulti', 'extract', 'extractLast'],
  schemaMulti: ['schema', 'extract', 'extractLast'],
};

/**
 * The role's settings as the command's options, checked as the flags are (each value through the
 * flag's own parser), set only where the command line gave none, nor one the setting cannot go with.
 */
export function applyRole(role: Role, cmd: Command, opts: Record<string, unknown>): string[] {
  const fromCli = (attr: string) => ['cli', 'env'].includes(cmd.getOptionValueSource(attr) ?? '');
  const skipped: string[] = [];
  for (const [key, value] of Object.entries(role.settings)) {
    // A role's own keys, no flag: its prompt text and its placeholders' defaults (./role-params.ts).
    if (key === 'prompt' || key === 'defaults') {
      roleTexts(role);
      continue;
    }
    const option = NOT_IN_ROLES.has(kebab(key)) ? undefined : optionFor(cmd, key, value);
    // One role serves chat and responses: a flag of the other command is left out, not an error.
    if (!option && GENERATION_FLAGS.has(`--${kebab(key)}`)) {
      skipped.push(key);
      continue;
    }
    if (!option) throw usage(`role file ${role.path}: "${key}" is not a flag of router ${cmd.name()}`);
    const attr = option.attributeName();
    if (fromCli(attr) || CANNOT_GO_WITH[attr]?.some(fromCli)) continue;
    // `no-fallbacks: true` names the flag as typed: the attribute (fallbacks) is its opposite.
    const asTyped = option.negate && option.long === `--${kebab(key)}` && typeof value === 'boolean';
    opts[attr] = optionValue(role, key, option, asTyped ? !value : value);
  }
  if (role.system && !fromCli('system') && cmd.options.some((o) => o.long === '--system')) opts.system = role.system;
  if (role.system && !fromCli('instructions') && cmd.options.some((o) => o.long === '--instructions')) opts.instructions = role.system;
  return skipped;
}

function optionValue(role: Role, key: string, option: Option, value: unknown): unknown {
  const bad = (why: string) => usage(`role file ${role.path}: ${key}: ${why}`);
  if (!option.required && !option.optional) {
    if (typeof value !== 'boolean') throw bad('true or false');
    // `stream: false` is --no-stream, `fallbacks: false` --no-fallbacks: the value is the attribute's.
    return value;
  }
  // A schema written as YAML is the schema itself (as inline JSON is on the command line).
  if (option.long?.startsWith('--schema') && isRecord(value)) return option.parseArg ? option.parseArg(JSON.stringify(value), undefined) : JSON.stringify(value);
  if (isRecord(value) && Object.values(value).some((v) => v === null || typeof v === 'object')) throw bad('each key takes a text or a number');
  const items = Array.isArray(value) ? value : isRecord(value) ? Object.entries(value).map(([k, v]) => `${k}=${v}`) : [value];
  let parsed: unknown;
  for (const item of items) {
    if (item === null || typeof item === 'object') throw bad('a text, a number, or a list of them');
    const text = inFolder(option, String(item), dirname(role.path));
    if (option.argChoices && !option.argChoices.includes(text)) throw bad(`"${text}" is not one of ${option.argChoices.join(', ')}`);
    try {
      parsed = option.parseArg ? option.parseArg(text, parsed) : text;
    } catch (err) {
      throw bad(`"${text}" ${(err as Error).message.replace(/\.$/, '')}`);
    }
  }
  return parsed;
}

/** Flags that name a file or folder: in a role, a relative one is taken from the role's folder. */
const PATH_FLAGS = new Set(['--tools', '--schema', '--schema-multi', '--attach', '--save-images']);

/**
 * A path a role holds, resolved against `folder` (the roles folder when read; the working
 * folder when `roles save` writes it): a role then works from any folder. A URL, "-" (stdin) and
 * an inline schema (JSON, or llm's concise fields) are left as they are.
 */
export function inFolder(option: Option, given: string, folder: string): string {
  // As the flag takes it: "@PATH" is PATH (see fileArg); a folder to write into (--save-images) takes none.
  const value = option.long === '--save-images' ? given : fileArg(given);
  if (!PATH_FLAGS.has(option.long ?? '') || value === '' || value === '-' || isAbsolute(value) || /^[a-z][\w+.-]*:/i.test(value)) return value;
  if (option.long?.startsWith('--schema') && (value.trimStart().startsWith('{') || (looksConcise(value) && !existsSync(resolve(folder, value))))) return value;
  return resolve(folder, value);
}

/**
 * A check of the options that failed on a value the role set (more than 4 stop sequences, say):
 * the error names the role's file, not a flag the user never typed.
 */
export function blameRole(err: unknown, role: Role | undefined, cmd: Command): unknown {
  err = cliErrorOf(err) ?? err;
  const flag = role && err instanceof CliError ? /^--([\w-]+)/.exec(err.message)?.[1] : undefined;
  const option = flag && cmd.options.find((o) => o.long === `--${flag}`);
  if (!role || !option || ['cli', 'env'].includes(cmd.getOptionValueSource(option.attributeName()) ?? '')) return err;
  if (!Object.keys(role.settings).some((k) => kebab(k) === flag || SAME_SETTING[kebab(k)] === flag)) return err;
  return usage(`role file ${role.path}: ${(err as Error).message.slice(2)}`);
}

/** The options of a command as given, before any role was applied to them. */
const optionsAsGiven = new WeakMap<object, Record<string, unknown>>();

/**
 * `--role NAME` on a command: the role read and applied to its options (a no-op without the flag).
 * `fromSettings`: flag values the settings give (a profile's mcp), counted when a flag lacks its partner.
 */
export async function applyRoleFlag(cmd: Command, opts: Record<string, unknown>, io: IO, fromSettings?: () => Promise<Record<string, unknown>>): Promise<Role | undefined> {
  const name = opts.role;
  if (typeof name !== 'string') return undefined;
  await loadYaml();
  const role = readRole(io.env, name);
  // Another role (/role in chat -i) replaces the one before: its settings go, the command line's stay.
  const given = optionsAsGiven.get(opts);
  if (given) {
    for (const key of Object.keys(opts)) if (!(key in given)) delete opts[key];
    Object.assign(opts, given, { role: name });
  } else optionsAsGiven.set(opts, { ...opts });
  const skipped = applyRole(role, cmd, opts);
  try {
    checkGoesWithRole(cmd, opts);
  } catch (err) {
    if (!fromSettings) throw err;
    const set = (o: Record<string, unknown>) => Object.entries(o).filter(([, v]) => v !== undefined);
    checkGoesWithRole(cmd, Object.fromEntries([...set(await fromSettings()), ...set(opts)]));
  }
  if (skipped.length) io.note(`note: role ${name}: ${skipped.join(', ')} left out (not a flag of router ${cmd.name()})`);
  return role;
}

/** A role's prompt text (`$input` the prompt) and the defaults of its placeholders, checked. */
export function roleTexts(role: Role): { prompt?: string; defaults: Record<string, string> } {
  const { prompt, defaults = {} } = role.settings;
  if (prompt !== undefined && typeof prompt !== 'string') throw usage(`role file ${role.path}: prompt: a text (the prompt sent, $input where the prompt given goes)`);
  const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  if (!isRecord(defaults) || !Object.values(defaults).every(scalar)) throw usage(`role file ${role.path}: defaults: "name: value" lines, a value for each $name`);
  return { ...(prompt === undefined ? {} : { prompt }), defaults: Object.fromEntries(Object.entries(defaults).map(([k, v]) => [k, String(v)])) };
}

/** The flags of chat and responses, the commands a role serves. */
const GENERATION_FLAGS = new Set(
  [...Object.values(CHAT_FLAGS), ...Object.values(RESPONSES_FLAGS)].flatMap((f) => (Array.isArray(f) ? f : [f])).map((f: FlagSpec) => /--[\w-]+/.exec(f.flags)![0]),
);
