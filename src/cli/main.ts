import { Command, CommanderError } from './commander.js';
import { EXIT } from './exit-codes.js';
import { addFlags, type FlagSpec, type FlagTable } from './flags/flags.js';
import { GLOBAL_FLAGS } from './flags/global-flags.js';
import { VERSION } from '../client/version.js';
import { attachRuntime, type Runtime } from './run.js';
import { IO, processStreams, stdinIsTerminal, type Streams } from './io/io.js';
import { didYouMean } from '../internal/did-you-mean.js';
import { definitionOf, register, type AnyCommandDef, type GroupDef } from './define.js';
import { installLastResort, report } from './last-resort.js';
import { docsInHelp, helpAfterText, helpWidth } from './io/installed-docs.js';
import { narrowItems } from './io/narrow-help.js';
import { withKnownKeysHidden } from '../config/known-keys.js';
import { commandPath, usageLine } from './flags/usage-line.js';
import { takesNextWord } from './flags/value-word.js';
import type { JsonTarget } from './io/json-output.js';

/** A command: `group`, where `router --help` lists it. */
interface Entry { name: string; group: string; load: () => Promise<AnyCommandDef | GroupDef> }

// Every command by name, loaded only when it runs: all else of a command (summary, usage, flags, JSON fields)
// is its definition's. The root help loads them all (off a terminal it is rendered at build: src/cli/quick.ts).
export const COMMANDS: readonly Entry[] = [
  { name: 'chat', group: 'Generate:', load: async () => (await import('./commands/chat/index.js')).chat },
  { name: 'responses', group: 'Generate:', load: async () => (await import('./commands/responses/index.js')).responses },
  { name: 'embed', group: 'Generate:', load: async () => (await import('./commands/embed.js')).embed },
  { name: 'embed-multi', group: 'Generate:', load: async () => (await import('./commands/collections/embed-multi.js')).embedMulti },
  { name: 'similar', group: 'Generate:', load: async () => (await import('./commands/collections/similar.js')).similar },
  { name: 'collections', group: 'Generate:', load: async () => (await import('./commands/collections/index.js')).collections },
  { name: 'speak', group: 'Generate:', load: async () => (await import('./commands/speak.js')).speak },
  { name: 'decide', group: 'Generate:', load: async () => (await import('./commands/decide.js')).decide },
  { name: 'roles', group: 'Generate:', load: async () => (await import('./commands/roles.js')).roles },
  { name: 'aliases', group: 'Generate:', load: async () => (await import('./commands/aliases.js')).aliases },
  { name: 'conversations', group: 'Generate:', load: async () => (await import('./commands/conversations.js')).conversations },
  { name: 'logs', group: 'Generate:', load: async () => (await import('./commands/logs.js')).logs },
  { name: 'fragments', group: 'Generate:', load: async () => (await import('./commands/fragments.js')).fragments },
  { name: 'batch', group: 'Batches:', load: async () => (await import('./commands/batch/index.js')).batch },
  { name: 'api', group: 'Scripting:', load: async () => (await import('./commands/api.js')).api },
  { name: 'models', group: 'Scripting:', load: async () => (await import('./commands/models/index.js')).models },
  { name: 'credits', group: 'Scripting:', load: async () => (await import('./commands/credits.js')).credits },
  { name: 'keys', group: 'Scripting:', load: async () => (await import('./commands/keys/index.js')).keys },
  { name: 'generation', group: 'Scripting:', load: async () => (await import('./commands/generation.js')).generation },
  { name: 'usage', group: 'Scripting:', load: async () => (await import('./commands/usage.js')).usageCommand },
  { name: 'login', group: 'Setup:', load: async () => (await import('./commands/config/login.js')).login },
  { name: 'auth', group: 'Setup:', load: async () => (await import('./commands/auth.js')).auth },
  { name: 'config', group: 'Setup:', load: async () => (await import('./commands/config/index.js')).config },
  { name: 'serve', group: 'Setup:', load: async () => (await import('./commands/serve.js')).serve },
  { name: 'completion', group: 'Setup:', load: async () => (await import('./commands/completion/index.js')).completion },
  { name: '__complete', group: 'Setup:', load: async () => (await import('./commands/completion/index.js')).complete },
];

/** The global flags that take a value (`-p work`), by the table: the word after them is no command. */
export const GLOBAL_WITH_VALUE = new Set(
  Object.values(GLOBAL_FLAGS as FlagTable)
    .flatMap((entry) => (Array.isArray(entry) ? (entry as readonly FlagSpec[]) : [entry as FlagSpec]))
    .filter((spec) => /[<[]/.test(spec.flags))
    .flatMap((spec) => spec.flags.split(/[\s,]+/).filter((w) => w.startsWith('-'))),
);

/** The command an argv runs (`router help X` counts as X), if any. */
export function invokedCommand(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (takesNextWord(a, GLOBAL_WITH_VALUE)) {
      i++;
      continue;
    }
    // A help flag before any command word (`router --help chat`): commander shows the root help.
    if (a === '--help' || a === '-h') return undefined;
    if (a.startsWith('-')) continue;
    if (a === 'help') return args.slice(i + 1).find((x) => !x.startsWith('-'));
    return a;
  }
  return undefined;
}

const ROOT_HELP_AFTER = `
Examples:
  $ router serve --port 8080                      # local emulator, prints a key
  $ echo "hi" | router chat --model local/echo
  $ router batch create requests.jsonl --model local/echo --watch
  $ router speak "hello" --voice alloy --model local/tts -o hello.mp3

Exit codes: 0 ok, 1 failure, 2 usage, 3 auth, 4 payment, 5 not found/gone, 6 rate limited, 7 server, 8 network, 9 batch failed, 10 not the --schema, 11 tool calls not run, 12 MCP server failed, 129 hung up, 130 interrupted, 143 terminated.`;

/** The command tree: with `only` a command's name, just it; a word naming none, stand-ins (did you mean); none, the whole tree. */
export async function buildProgram(only?: string | null): Promise<Command> {
  const program = new Command('router')
    .description('Command line for the Model Routing Service: chat, batches, responses, embeddings, speech and decisions.')
    .version(VERSION, '-V, --version');
  addFlags(program, GLOBAL_FLAGS).addHelpText('after', ({ command }) => helpAfterText(ROOT_HELP_AFTER, command));
  // Before the commands: each made by .command() takes these over (copyInheritedSettings): global options in every help.
  program.configureHelp({
    sortSubcommands: false,
    showGlobalOptions: true,
    // commander leaves a description unwrapped in less than 40 columns: on a 60-column terminal, every option's.
    minWidthToWrap: 20,
    subcommandTerm: (cmd) => {
      const usage = listedUsage(cmd);
      return `${cmd.name()}${usage ? ` ${usage}` : ''}`;
    },
  });
  // A one-shot call builds only its own command: 19 others' stand-ins cost it ~1% of its instructions.
  const full = only === undefined || only === null;
  const known = !full && COMMANDS.some((entry) => entry.name === only);
  for (const entry of COMMANDS) {
    if (known && entry.name !== only) continue;
    if (program.commands.length === 0 || program.commands.at(-1)!.helpGroup() !== entry.group) program.commandsGroup(entry.group);
    if (full || entry.name === only) register(program, await entry.load());
    else program.command(entry.name, { hidden: entry.name.startsWith('__') });
  }
  // --jq and --json FIELDS join every command with --json (not needed for the top-level help).
  if (only !== null) {
    const [{ Option }, { addJsonFlags }] = await Promise.all([import('./commander.js'), import('./io/json-output.js')]);
    addJsonFlags(program, Option);
  }
  return program;
}

/** The command `--json FIELDS` is given to (the invoked one is defined in full): its path and its definition's fields. */
function jsonTarget(program: Command, words: string[]): JsonTarget | undefined {
  const top = program.commands.find((c) => c.name() === words[0]);
  const sub = top?.commands.find((c) => c.name() === words[1]);
  for (const [cmd, path] of [[sub, words.join(' ')], [top, words[0]]] as const) {
    const def = cmd && definitionOf(cmd);
    if (def && 'run' in def && def.jsonFields) return { path: path!, fields: def.jsonFields, noArguments: !def.args?.length };
  }
  return undefined;
}

/**
 * How the root help lists a command: the arguments of its definition's usage, else of commander's; nothing for a
 * group. "[options]" is left to the command's own help: it widened the list's first column so that most summaries
 * wrapped.
 */
export function listedUsage(cmd: Command): string {
  const def = definitionOf(cmd);
  if (!def || !('run' in def)) return '';
  return (def.usage ?? cmd.usage()).replace(/\[command\]\s*/, '').replace(/^\[options\]\s*/, '');
}

/** Applies exitOverride and the runtime's streams to the whole tree: usage errors exit with EXIT.USAGE. */
function applyExit(cmd: Command, streams: Streams, red: (line: string) => string): void {
  cmd.exitOverride();
  // A bare `router` or `router batch` shows its help as gh does: on stdout, exit 0 (commander's: stderr, as an error).
  const help = cmd.help.bind(cmd) as (context?: unknown) => never;
  cmd.help = ((context?: { error?: boolean }) => help(context?.error ? undefined : context)) as Command['help'];
  cmd.showSuggestionAfterError(false);
  cmd.configureOutput({
    writeOut: (str) => streams.stdout.write(str),
    writeErr: (str) => streams.stderr.write(withKnownKeysHidden(str, streams.env)),
    getOutHelpWidth: () => helpWidth(streams.stdout, streams.tty?.stdout ?? !!streams.stdout.isTTY),
    getErrHelpWidth: () => helpWidth(streams.stderr, streams.tty?.stderr ?? !!streams.stderr.isTTY),
    outputError: (str, write) => write(red(usageLine(str, cmd, (t) => withKnownKeysHidden(t, streams.env), !stdinIsTerminal(streams)))),
  });
  // Help names docs pages (docs/keys.md): for its reader, files of the installed package, said by their paths.
  cmd.configureHelp({ ...cmd.configureHelp(), ...docsInHelp, ...narrowItems });
  for (const sub of cmd.commands) applyExit(sub, streams, red);
}

/** `router help X` for an X that is not a command is a usage error, not the main help. */
function unknownHelpTopic(program: Command, args: string[]): string | undefined {
  const at = args.indexOf('help');
  if (at < 0 || args.slice(0, at).some((a) => !a.startsWith('-'))) return undefined;
  const topic = args.slice(at + 1).find((a) => !a.startsWith('-'));
  if (!topic || program.commands.some((c) => c.name() === topic)) return undefined;
  return topic;
}

/** `router help batch run` is `router batch run --help` (commander's help command reads one word only). */
function helpOfSubcommand(args: string[]): string[] {
  const at = args.indexOf('help');
  if (at < 0 || args.slice(0, at).some((a) => !a.startsWith('-'))) return args;
  const words = args.slice(at + 1).filter((a) => !a.startsWith('-'));
  return words.length > 1 ? [...args.slice(0, at), ...words, '--help'] : args;
}

export async function main(rawArgv: string[], streams: Streams = processStreams()): Promise<number> {
  let args = helpOfSubcommand(rawArgv.slice(2));
  const real = streams.stdout === process.stdout;
  const runtime: Runtime = { streams, argv: args, exitCode: EXIT.OK, interrupts: real, fullProgram: () => buildProgram() };
  if (real) installLastResort(runtime);
  if (real && rawArgv.slice(2).some((a) => a.includes('\uFFFD'))) {
    const bad = (await import('./raw-argv.js')).notUtf8Argument(process.argv.slice(2));
    if (bad !== undefined) {
      new IO({}, streams).error(withKnownKeysHidden(`argument ${bad + 1} ("${process.argv[bad + 2]}") is not valid UTF-8 (its invalid bytes read as U+FFFD): give it in UTF-8; nothing was sent`, streams.env));
      return EXIT.USAGE;
    }
  }
  const program = await buildProgram(invokedCommand(args) ?? null);
  // A usage error found here or by commander looks as every other error line: "error:" red on a terminal (IO.error).
  const errColor = new IO({ color: args.includes('--no-color') ? false : undefined }, streams).errColor;
  const red = (line: string) => (errColor ? line.replace(/^error:/, '\x1b[31merror:\x1b[0m') : line);
  if (args.some((a) => a.startsWith('--json'))) {
    const { commandWords, rewriteJsonFields } = await import('./io/json-output.js');
    runtime.argv = args = rewriteJsonFields(args, jsonTarget(program, commandWords(args, GLOBAL_WITH_VALUE)));
  }
  // "-it's cold": text, not -i and -t (loaded only for a word that may be such text).
  const dashed = args.some((a) => /^-[^-].*[\s']/s.test(a)) ? (await import('./dashed-text.js')).dashedText(program, args, GLOBAL_WITH_VALUE) : undefined;
  if (dashed?.flag) {
    const q = (t: string) => (/["$`\\!]/.test(t) ? `'${t.replace(/'/g, "'\\''")}'` : `"${t}"`);
    streams.stderr.write(red(withKnownKeysHidden(`error: ${q(dashed.text)} would be read as ${dashed.flag} ${q(dashed.value!)}: text that starts with "-" goes after --, as in ${commandPath(dashed.cmd)} -- ${q(dashed.text)} (a flag's value with spaces goes apart: ${dashed.flag} ${q(dashed.value!)}); nothing was sent\n`, streams.env)));
    return EXIT.USAGE;
  }
  if (dashed) {
    streams.stderr.write(red(usageLine(`unknown option '${dashed.text}'`, dashed.cmd, (t) => withKnownKeysHidden(t, streams.env))));
    return EXIT.USAGE;
  }
  // -cq: each short flag of a cluster where it is valid (and llm's --param NAME VALUE as one word) (the program's or the command's); runtime.argv keeps the words as given.
  const flags = args.some((a) => /^-[^-]{2}|^--(param|default)$/.test(a)) ? (await import('./short-flags.js')).splitShortFlags(program, args, GLOBAL_WITH_VALUE) : args;
  const argv = [...rawArgv.slice(0, 2), ...flags];
  attachRuntime(program, runtime);
  applyExit(program, streams, red);
  const topic = unknownHelpTopic(program, args);
  if (topic !== undefined) {
    streams.stderr.write(red(withKnownKeysHidden(`error: unknown command '${topic}'${didYouMean(topic, program.commands.map((c) => c.name()))}; see "router --help"\n`, streams.env)));
    return EXIT.USAGE;
  }
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      const ok = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help';
      return ok ? runtime.exitCode : EXIT.USAGE;
    }
    return report(err, streams);
  }
  // Interrupted with output still waiting for a reader that does not read (a pipe, a FIFO): that
  // write would hold the process open, maybe for ever, and it is not wanted any more.
  if (real && (runtime.exitCode === EXIT.INTERRUPTED || runtime.exitCode === EXIT.TERMINATED)) setTimeout(() => process.exit(runtime.exitCode), 100).unref();
  return runtime.exitCode;
}
