/**
 * Text that starts with "-" and holds a space or an apostrophe ("-it's cold", "-i think so") is a prompt
 * or an argument, never short flags run together: commander would read `-i`, then `-t` with "'s cold".
 * Such a word, before any `--` and not the value of the flag before it, is found here, so that it is
 * refused whole, with the `--` form that lets it through. A value attached to a short flag that takes
 * one stays that flag's (`-mlocal/echo`, `-s"You're"`, `-qsterse` after flags that take none) unless it
 * holds whitespace, where the command takes text (a prompt, words) and no other word is text: "-so what's
 * up?" alone is a sentence far more often than `-s` with "o what's up?", and the shell has dropped any
 * quotes that told them apart, so it is refused too, naming the flag and its value (`-s "be terse"`,
 * apart, still gives the flag a value with spaces; so does `-s"be terse" hi`). A value that starts with an
 * apostrophe is refused for the same reason ("-it's" would give -t "'s").
 */
import type { Command, Option } from './commander.js';
import { takesNextWord } from './flags/value-word.js';

function* optionsOf(cmd: Command): Generator<Option> {
  for (let c: Command | null = cmd; c; c = c.parent) yield* c.options;
}

/** The first such word of `args` (the command line after `router`), and the command it goes to; undefined: none. */
export function dashedText(program: Command, args: readonly string[], globalWithValue: ReadonlySet<string>): (Dashed & { cmd: Command }) | undefined {
  const cmd = commandOf(program, args, globalWithValue);
  if (!cmd?.registeredArguments.length) return undefined;
  let depth = 0;
  for (let c = cmd.parent; c; c = c.parent) depth++;
  const found = firstDashed(cmd, args, depth);
  // A flag's attached value is taken for text only where the command takes text (a prompt, words):
  // `router api -H'X-Title: a b' PATH` is a header.
  if (found?.flag && !cmd.registeredArguments.some((a) => a.variadic)) return undefined;
  return found && { ...found, cmd };
}

/** The word; with `flag`, a short flag that takes a value, and `value`, the rest of the word it would read. */
export interface Dashed {
  text: string;
  flag?: string;
  value?: string;
}

/** The command the words of an argv name (`batch` when the word after it is no subcommand). */
export function commandOf(program: Command, args: readonly string[], globalWithValue: ReadonlySet<string>): Command | undefined {
  const words: string[] = [];
  for (let i = 0; i < args.length && words.length < 2; i++) {
    if (args[i] === '--') break;
    if (takesNextWord(args[i]!, globalWithValue)) i++;
    else if (!args[i]!.startsWith('-')) words.push(args[i]!);
  }
  const top = program.commands.find((c) => c.name() === words[0]);
  return top?.commands.find((c) => c.name() === words[1]) ?? top;
}

/**
 * `depth`: how many words name the command. A flag's attached value with whitespace is refused only
 * when no other word is text (`router chat -s"be terse" hi` is -s with "be terse", the prompt hi).
 */
function firstDashed(cmd: Command, args: readonly string[], depth: number): Dashed | undefined {
  const options = [...optionsOf(cmd)];
  const find = (flag: string) => options.find((o) => o.short === flag || o.long === flag);
  let attached: Dashed | undefined;
  let words = 0;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      if (i < args.length - 1) words = Infinity;
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      words++;
      continue;
    }
    if (a.startsWith('--')) {
      if (!a.includes('=') && find(a)?.required) i++;
      continue;
    }
    const first = find(a.slice(0, 2));
    if (first && (first.required || first.optional)) {
      // -s VALUE, or the value attached: -sVALUE (but "-so what's up?" is a sentence).
      if (a.length === 2 && first.required) i++;
      else if (/\s/.test(a.slice(2))) attached ??= { text: a, flag: a.slice(0, 2), value: a.slice(2) };
      continue;
    }
    // Flags run together: ones that take no value, then maybe one that does (-qs VALUE, or -qsVALUE attached).
    let j = 1;
    while (j < a.length && find(`-${a[j]}`) && !find(`-${a[j]}`)!.required && !find(`-${a[j]}`)!.optional) j++;
    const taker = j > 1 && j < a.length ? find(`-${a[j]}`) : undefined;
    if (taker && j === a.length - 1) {
      if (taker.required) i++;
      continue;
    }
    // -qs"You're" is -q -s; "-it's cold" (-i, then -t with "'s cold") and "-qso what?" are text.
    const value = a.slice(j + 1);
    if (taker && /^['\s]/.test(value)) return { text: a };
    if (taker && /\s/.test(value)) attached ??= { text: a, flag: `-${a[j]}`, value };
    else if (taker) continue;
    else if (/[\s']/.test(a)) return { text: a };
  }
  return words > depth ? undefined : attached;
}
