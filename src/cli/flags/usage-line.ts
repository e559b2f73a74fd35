/**
 * A usage error as one line: commander's message in router's words, what the user most likely meant (a near flag or
 * command, another tool's name for one, text meant as a prompt), and the help to read.
 */
import type { Command } from '../commander.js';
import { definitionOf, type ArgSpec } from '../define.js';
import { closest, didYouMean } from '../../internal/did-you-mean.js';
import { visible } from '../../internal/visible.js';
import { oneWordPrompt, otherToolsHint } from './other-tools-words.js';

export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Flags other tools spell otherwise, by their name there. */
const FLAG_ALIASES: Record<string, string> = { image: 'attach', images: 'attach', img: 'attach', attachment: 'attach' };
/**
 * One setting that router's commands spell apart, or that the API's body names otherwise (`max_completion_tokens`): a
 * spelling of the group given to a command names the one it takes (chat's --max-tokens is responses' --max-output-tokens).
 */
const SAME_SETTING: readonly (readonly string[])[] = [
  ['max-tokens', 'max-output-tokens', 'max-completion-tokens'],
  ['system', 'instructions'],
  ['response-format', 'text-format'],
  ['results', 'output'],
];
/** Other tools' names for a subcommand (gh's and docker's ls, rm), where the group has none of that name. */
const COMMAND_ALIASES: Record<string, string[]> = { ls: ['list'], rm: ['delete'], remove: ['delete'], del: ['delete'], view: ['show', 'list'], show: ['list'], cat: ['show'], new: ['create', 'save'], add: ['save', 'create'] };
/** A subcommand other tools have that is a flag here, by group and word (OpenAI's batch results, batch output). */
const FLAG_COMMANDS: Record<string, string> = { 'batch results': 'get ID --results FILE', 'batch output': 'get ID --results FILE' };

function* allOptions(cmd: Command) {
  for (let c: Command | null = cmd; c; c = c.parent) yield* c.options;
}

/**
 * A value outside an option's or argument's choices, an unknown flag or command: what it most likely
 * meant, only when close (commander's own guesses reach too far: --image was --usage).
 */
function choiceHint(text: string, cmd: Command): string {
  const m = /'([^']*)' is invalid.*[Aa]llowed(?: choices are|:) (.+)$/.exec(text);
  if (m) return didYouMean(m[1]!, m[2]!.split(/,\s*/));
  // A word of llm's (router logs, chat -o): where router has it, rather than a guess.
  const foreign = /^unknown (?:command|option) '(.+)'$|^option '(-\w), [^']*' argument '[A-Za-z_]/.exec(text);
  const instead = foreign && otherToolsHint(commandPath(cmd), (foreign[1] ?? foreign[2])!);
  if (instead) return ` (${instead})`;
  // No flag has a space in it or starts with a digit: text meant as a prompt or an argument, where the command takes one.
  const words = /^unknown option '(-.*)'$/.exec(text);
  if (words && /[\s']|^-\d/.test(words[1]!) && cmd.registeredArguments.length) return ` (text that starts with "-" goes after --, as in ${commandPath(cmd)} -- '${words[1]!.replace(/'/g, "'\\''")}')`;
  // An id kept under a name that starts with "-" (chat --conversation -x makes one): commander reads it as flags.
  if (words && /^-[^-]/.test(words[1]!) && cmd.registeredArguments[0]?.name() === 'id') return ` (an id that starts with "-" goes after --, as in ${commandPath(cmd)} -- ${words[1]})`;
  const flag = /^unknown option '(--[^'=]+)/.exec(text);
  if (flag) {
    const flags: string[] = [];
    for (let c: Command | null = cmd; c; c = c.parent) for (const o of c.options) if (o.long) flags.push(o.long.slice(2));
    // Other tools' names for a flag (llm's and mods' --image is -a/--attach here).
    const word = flag[1]!.slice(2).toLowerCase().replace(/_/g, '-');
    const same = SAME_SETTING.find((group) => group.includes(word))?.filter((w) => w !== word);
    const alias = FLAG_ALIASES[flag[1]!.slice(2)];
    const known = [...allOptions(cmd)].find((o) => (alias !== undefined && o.long === `--${alias}`) || same?.some((w) => o.long === `--${w}`));
    if (known) return ` (did you mean ${known.flags.replace(/ [<[].*$/, '').replace(', ', '/')}?)`;
    // Measured without the dashes: they are no part of the word the user may have mistyped.
    const meant = closest(flag[1]!.slice(2), flags);
    return meant ? ` (did you mean --${meant}?)` : '';
  }
  const command = /^unknown command '([^']+)'/.exec(text);
  const alias = command && (FLAG_COMMANDS[`${cmd.name()} ${command[1]!}`] ?? COMMAND_ALIASES[command[1]!]?.find((a) => cmd.commands.some((c) => c.name() === a)));
  if (alias) return ` (did you mean ${alias}?)`;
  if (!command) return '';
  return didYouMean(command[1]!, cmd.commands.map((c) => c.name())) || (cmd.parent ? '' : oneWordPrompt(command[1]!, Object.entries(COMMAND_ALIASES).flat(2)));
}

/** A missing argument that "-" stands in for, while stdin is piped: the user meant stdin, and "-" says so. */
function stdinHint(text: string, cmd: Command, stdinPiped: boolean): string {
  const name = stdinPiped && /^missing required argument '([^']+)'$/.exec(text)?.[1];
  const def = name && definitionOf(cmd);
  const arg = def && 'run' in def ? (def.args as readonly ArgSpec[] | undefined)?.find((a) => a.name.replace(/[<>[\].]/g, '') === name) : undefined;
  return arg?.stdin ? ` (stdin is piped: give - to read it, as in ${commandPath(cmd)} -)` : '';
}

/**
 * A missing argument taken as an option's value: a flag whose value is optional (`--results [file]`) given before the
 * argument reads the argument as its value (router batch get --results batch_1): the line says so and the order that works.
 */
function optionValueHint(text: string, cmd: Command): string {
  const name = /^missing required argument '([^']+)'$/.exec(text)?.[1];
  if (!name) return '';
  const values = cmd.opts() as Record<string, unknown>;
  const took = cmd.options.find((o) => o.optional && !o.required && o.long && typeof values[o.attributeName()] === 'string');
  if (!took) return '';
  const value = values[took.attributeName()] as string;
  const word = /[[<]([^\]>]+)[\]>]/.exec(took.flags)?.[1] ?? 'value';
  return ` (${took.long} took "${value}" as its ${word}: give ${name} first, as in ${commandPath(cmd)} ${value} ${took.long})`;
}

/** Commander's message as one line (its "did you mean …?" kept), then where to look. */
export function usageLine(message: string, cmd: Command, hide: (text: string) => string = (t) => t, stdinPiped = false): string {
  const [first, ...rest] = message.trim().split('\n').map((l) => l.trim()).filter(Boolean);
  // commander's "argument 'x' is invalid." joined to the parser's reason reads as one clause.
  const text = [first!.replace(/^error:\s*/, ''), ...rest]
    .join(' ')
    // An argument's bad value reads as an option's does.
    .replace(/^command-argument value '([^']*)' is invalid for argument '([^']*)'\./, "argument '$2' value '$1' is invalid.")
    .replace(/ is invalid\. (\S)/, (_, c: string) => ` is invalid: ${c.toLowerCase()}`)
    // commander's guess, as every other guess is written: in lower case.
    .replace(/\(Did you mean /g, '(did you mean ')
    .replace(/\.$/, '');
  // The input it quotes as io.error shows it: keys hidden, control characters escaped, then a long value (a model id of 5,000 characters) cut.
  const shown = visible(hide(text + choiceHint(text, cmd) + (optionValueHint(text, cmd) || stdinHint(text, cmd, stdinPiped)))).replace(/'([^']{101,})'/g, (_, v: string) => `'${[...v].slice(0, 100).join('')}…'`);
  return `error: ${shown}; see "${commandPath(cmd)} --help"\n`;
}
