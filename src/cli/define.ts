/**
 * The one shape of a command: `defineCommand({ name, summary, description, args, flags, examples, run })`,
 * and `defineGroup({ name, summary, description, commands })` for a command of subcommands. The option and
 * argument types of `run` are inferred from the tables; `register` turns a definition into commander's.
 */
import { Argument, type Command } from './commander.js';
import { addFlags, checkGoesWith, type DynamicKind, type FlagTable, type FlagValues } from './flags/flags.js';
import { action, type RunContext } from './run.js';
import type { Settings } from '../config/settings.js';
import { helpAfterText } from './io/installed-docs.js';
import { CliError, EXIT } from './exit-codes.js';

/** A positional argument: `<name>` (required), `[name]` (optional), `...` for the rest of them. */
export interface ArgSpec {
  name: string;
  help: string;
  choices?: readonly string[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  parse?: (value: string, previous: any) => unknown;
  /** What a shell completes it to: values router is asked for (batch ids, roles, …), or files. */
  complete?: DynamicKind | 'files';
  /** "-" reads stdin: missing while stdin is piped, the usage error says to give it. */
  stdin?: boolean;
}

type ArgValue<S> = S extends { parse: (...args: never[]) => infer R }
  ? S extends { name: `[${string}` } ? R | undefined : R
  : S extends { name: `${string}...${string}` }
    ? string[]
    : S extends { choices: readonly (infer C)[] }
      ? S extends { name: `[${string}` } ? C | undefined : C
      : S extends { name: `[${string}` }
        ? string | undefined
        : string;

/** The values commander hands the command for its arguments, in order. */
export type ArgValues<A extends readonly ArgSpec[]> = { -readonly [K in keyof A]: ArgValue<A[K]> };

export interface CommandDef<F extends FlagTable = FlagTable, A extends readonly ArgSpec[] = readonly ArgSpec[]> {
  name: string;
  /** One line for the parent's list of commands. */
  summary: string;
  /** What `NAME --help` says first (the summary when left out). */
  description?: string;
  args?: A;
  flags?: F;
  /** Lines of `--help`'s Examples, each run verbatim by test/e2e/examples.test.ts; ` \\\n` continues one (80 columns). */
  examples?: readonly string[];
  /** Text between the flags and the examples. */
  notes?: string;
  /** Not listed in help (a command for the completion scripts). */
  hidden?: boolean;
  /** The usage line, where the one commander derives from the args reads worse (`api [method] <path>`). */
  usage?: string;
  /** Subcommands of a command that also runs itself (`models` and `models show`). */
  commands?: readonly (AnyCommandDef | GroupDef)[];
  /** The top-level fields of its `--json` output (of each item, for lists): what `--json FIELDS` takes. */
  jsonFields?: readonly string[];
  /** Its calls go to the usage ledger (ctx.logUsage): the ledger is loaded with it. A group's holds for its commands. */
  logsUsage?: boolean;
  /** It prints prompts and answers kept on this machine (logs, conversations, fragments, roles): every key the run knows is hidden in its output (context.ts). */
  printsKept?: boolean;
  /**
   * It reads no file of internal/kept-state.ts (serve: the emulator), so it runs outside hearingKeptProblems, whose
   * AsyncLocalStorage would hook every promise, timer and tick of a server's requests (~100 ns an await on node 20).
   */
  readsNoKeptFiles?: boolean;
  /** Flag values the settings give where none is typed (a profile's mcp): a flag that goes with one is then taken. */
  fromSettings?: (settings: Settings) => Record<string, unknown>;
  run: (ctx: RunContext<FlagValues<F>>, ...args: ArgValues<A>) => Promise<void>;
}

export interface GroupDef {
  name: string;
  summary: string;
  logsUsage?: boolean;
  description?: string;
  commands: readonly (AnyCommandDef | GroupDef)[];
  examples?: readonly string[];
  notes?: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommandDef = CommandDef<any, any>;

export function defineCommand<const F extends FlagTable = Record<never, never>, const A extends readonly ArgSpec[] = []>(def: CommandDef<F, A>): CommandDef<F, A> {
  return def;
}

export function defineGroup(def: GroupDef): GroupDef {
  return def;
}

/** An example as help prints it: `  $ ` first, each line after one ending ` \` indented under it (each fits 80 columns). */
const exampleLines = (e: string): string => `  $ ${e.replaceAll('\n', '\n      ')}`;

function helpAfter(notes: string | undefined, examples: readonly string[] | undefined): string {
  const parts = [notes, examples?.length ? `Examples:\n${examples.map(exampleLines).join('\n')}` : undefined].filter(Boolean);
  return parts.length ? `\n${parts.join('\n\n')}` : '';
}

const definitions = new WeakMap<Command, AnyCommandDef | GroupDef>();
const argCompletions = new WeakMap<Argument, DynamicKind | 'files'>();

/** What a shell completes an argument to, by its definition. */
export function argCompletion(arg: Argument): DynamicKind | 'files' | undefined {
  return argCompletions.get(arg);
}

/** The definition a command of the tree was registered from (undefined for help's stand-ins). */
export function definitionOf(cmd: Command): AnyCommandDef | GroupDef | undefined {
  return definitions.get(cmd);
}

/** Adds a definition (a command, or a group and all its commands) under `parent`; returns commander's command. */
export function register(parent: Command, def: AnyCommandDef | GroupDef, inGroup: { logsUsage?: boolean } = {}): Command {
  const cmd = parent.command(def.name, { hidden: 'hidden' in def && def.hidden }).summary(def.summary).description(def.description ?? def.summary);
  definitions.set(cmd, def);
  const logsUsage = def.logsUsage ?? inGroup.logsUsage;
  const after = helpAfter(def.notes, def.examples);
  if (after) cmd.addHelpText('after', ({ command }) => helpAfterText(after, command));
  if (!('run' in def)) {
    for (const sub of def.commands) register(cmd, sub, { logsUsage });
    return cmd;
  }
  for (const a of def.args ?? []) {
    const arg = new Argument(a.name, a.help);
    if (a.choices) arg.choices(a.choices);
    if (a.parse) arg.argParser(a.parse);
    if (a.complete) argCompletions.set(arg, a.complete);
    cmd.addArgument(arg);
  }
  if (def.flags) addFlags(cmd, def.flags);
  if (def.usage) cmd.usage(def.usage);
  for (const sub of def.commands ?? []) register(cmd, sub, { logsUsage });
  const run = def.run as (ctx: RunContext<unknown>, ...args: unknown[]) => Promise<void>;
  const flags = def.flags;
  const fromSettings = def.fromSettings;
  const printsKept = def.printsKept;
  const hidden = 'hidden' in def && def.hidden;
  return cmd.action(action(async (ctx: RunContext<unknown>, ...args: unknown[]) => {
    if (!hidden) refuseLoneHelp(ctx, args);
    if (flags) await checkFlagsGoWith(ctx, flags, fromSettings);
    if (printsKept) await (await import('./context.js')).hideKnownKeys(ctx.io, true);
    return run(ctx, ...args);
  }, { logsUsage, jsonFields: def.jsonFields, readsNoKeptFiles: def.readsNoKeptFiles }));
}

/** goesWith, the settings' values counted (read only when a typed flag lacks its partner on the command line). */
async function checkFlagsGoWith(ctx: RunContext<unknown>, flags: FlagTable, fromSettings: CommandDef['fromSettings']): Promise<void> {
  const opts = ctx.opts as Record<string, unknown>;
  try {
    checkGoesWith(ctx.cmd, flags, opts);
  } catch (err) {
    if (!fromSettings) throw err;
    const set = (o: Record<string, unknown>) => Object.entries(o).filter(([, v]) => v !== undefined);
    checkGoesWith(ctx.cmd, flags, Object.fromEntries([...set(fromSettings(await ctx.settings())), ...set(opts)]));
  }
}

/**
 * `router chat help` asks for help, not an answer to "help": a lone argument `help` is refused (exit 2, nothing
 * sent) unless it comes after `--` (llm sends it, gh's leaf commands take it as their argument: both spend it).
 */
function refuseLoneHelp(ctx: RunContext<unknown>, args: unknown[]): void {
  const words = args.flat().filter((a) => a !== undefined);
  if (words.length !== 1 || words[0] !== 'help') return;
  const at = ctx.argv.lastIndexOf('help');
  if (ctx.argv.slice(0, at).includes('--')) return;
  const names: string[] = [];
  for (let c: Command | null = ctx.cmd; c; c = c.parent) names.unshift(c.name());
  const path = names.join(' ');
  const arg = ctx.cmd.registeredArguments[0]?.name() ?? 'argument';
  throw new CliError(`"help" alone would be taken as ${path}'s ${arg}: for help, ${path.replace(/^router /, 'router help ')} (or ${path} --help); to give the word itself, ${path} -- help; nothing was sent`, EXIT.USAGE);
}
