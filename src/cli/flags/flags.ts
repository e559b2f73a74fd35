import { Option, type Command } from '../commander.js';
import { usage } from '../exit-codes.js';

/** The kinds of model a command takes: a Tab after its `--model` offers only those (`models`, `model-ids`: any). */
export const MODEL_PURPOSES = ['chat', 'speech', 'embedding'] as const;
export type ModelPurpose = (typeof MODEL_PURPOSES)[number];

/** Values a shell asks `router __complete KIND` for at completion time. */
export const DYNAMIC_KINDS = ['batch-ids', 'job-ids', 'key-hashes', 'profiles', 'settings', 'models', 'model-ids', ...MODEL_PURPOSES.flatMap((p) => [`${p}-models`, `${p}-model-ids`] as const), 'roles', 'conversations', 'aliases', 'collections'] as const;
export type DynamicKind = (typeof DYNAMIC_KINDS)[number];

/** One flag: commander's flags string and help, and a parser (whose result is the flag's type) or choices. */
export interface FlagSpec {
  flags: string;
  help: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  parse?: (value: string, previous: any) => unknown;
  choices?: readonly string[];
  default?: unknown;
  /** How help shows the default, when the value itself reads worse (900 for 15m). */
  defaultShown?: string;
  /** Taken but not listed in help (a flag kept for an old spelling, or one that only explains itself). */
  hidden?: boolean;
  /** The values a shell completes, where `parse` checks them itself (a list, a repeatable flag): `choices` are offered as they are. */
  values?: readonly string[];
  /** Means something only with one of these flags (keys of the same table): typed without them, a usage error. */
  goesWith?: readonly string[];
  /** What a shell completes after the flag, asked of router at completion time (models, profiles, …). */
  complete?: DynamicKind;
  /** Of one call, not of a session: `chat -i` refuses it typed, and leaves it out when a role sets it. */
  oneCall?: boolean;
}

/** A flag, or a flag and its negation (`--stream` and `--no-stream`) that set the same value. */
export type FlagEntry = FlagSpec | readonly FlagSpec[];
export type FlagTable = Record<string, FlagEntry>;

type ValueOf<S> = S extends readonly FlagSpec[]
  ? boolean
  : S extends { parse: (...args: never[]) => infer R }
    ? R
    : S extends { choices: readonly (infer C)[] }
      ? C
      : S extends { flags: `${string}...>` | `${string}...]` }
        ? string[]
        : S extends { flags: `${string}<${string}` | `${string}[${string}` }
          ? string
          : boolean;

type WithDefault<T extends FlagTable> = { [K in keyof T]: T[K] extends { default: unknown } ? K : never }[keyof T];

/** The options a table of flags produces, as commander hands them to the command (a flag with a default is always set). */
export type FlagValues<T extends FlagTable> = { -readonly [K in Exclude<keyof T, WithDefault<T>>]?: ValueOf<T[K]> } & { -readonly [K in WithDefault<T>]: ValueOf<T[K]> };

const completionValues = new WeakMap<Option, readonly string[]>();
const completionKinds = new WeakMap<Option, DynamicKind>();
/** Each command's flag table, for the check that runs again once a role has set its flags. */
const tables = new WeakMap<Command, FlagTable>();

/** What a shell offers after the flag: its choices, or the values its table names. */
export function valuesOf(option: Option): readonly string[] | undefined {
  return option.argChoices ?? completionValues.get(option);
}

/** What a shell asks router for after the flag, if anything. */
export function dynamicOf(option: Option): DynamicKind | undefined {
  return completionKinds.get(option);
}

/**
 * Adds a table of flags to a command. Each key is the name commander stores the value under (checked
 * here), so that the command's option type is inferred from the table (FlagValues) and never kept by hand.
 */
export function addFlags(cmd: Command, table: FlagTable): Command {
  tables.set(cmd, { ...tables.get(cmd), ...table });
  for (const [key, entry] of Object.entries(table)) {
    for (const spec of Array.isArray(entry) ? (entry as readonly FlagSpec[]) : [entry as FlagSpec]) {
      const option = new Option(spec.flags, spec.help);
      if (spec.choices) option.choices(spec.choices);
      if (spec.parse) option.argParser(spec.parse);
      if (spec.default !== undefined) option.default(spec.default, spec.defaultShown);
      if (spec.hidden) option.hideHelp();
      if (spec.values) completionValues.set(option, spec.values);
      if (spec.complete) completionKinds.set(option, spec.complete);
      if (option.attributeName() !== key) throw new Error(`flag ${spec.flags} is stored as ${option.attributeName()}, not ${key}`);
      cmd.addOption(option);
    }
  }
  return cmd;
}

/** The flags of a table marked `oneCall`: each key with its long flag. */
export function oneCallFlags(table: FlagTable): [string, string][] {
  return Object.entries(table).flatMap(([key, entry]) => {
    const spec = (Array.isArray(entry) ? (entry as readonly FlagSpec[])[0] : entry) as FlagSpec;
    return spec.oneCall ? [[key, /--[\w-]+/.exec(spec.flags)![0]] as [string, string]] : [];
  });
}

/**
 * Refuses a flag typed without the flag it goes with (`--interval goes with --watch`). A role may give
 * the other flag: with --role it is checked again once the role has set its flags (checkGoesWithRole).
 */
export function checkGoesWith(cmd: Command, table: FlagTable, opts: Record<string, unknown>, roleApplied = false): void {
  const given = (key: string) => opts[key] !== undefined && opts[key] !== false;
  const long = (key: string) => cmd.options.find((o) => o.attributeName() === key && !o.negate)?.long ?? key;
  for (const [key, entry] of Object.entries(table)) {
    const spec = (Array.isArray(entry) ? (entry as readonly FlagSpec[])[0] : entry) as FlagSpec;
    if (!spec.goesWith || cmd.getOptionValueSource(key) !== 'cli' || !given(key)) continue;
    if (spec.goesWith.some(given) || (typeof opts.role === 'string' && !roleApplied)) continue;
    throw usage(`${long(key)} goes with ${spec.goesWith.map(long).join(' or ')}`);
  }
}

/** The same check once a role's settings are in `opts`: what the role did not give is refused too. */
export function checkGoesWithRole(cmd: Command, opts: Record<string, unknown>): void {
  checkGoesWith(cmd, tables.get(cmd) ?? {}, opts, true);
}
