/**
 * Text that starts with "-" and holds a space or an apostrophe ("-it's cold", "-i think so") is a prompt
 * or an argument, never short flags run together: commander would read `-i`, then `-t` with "'s cold".
 * Such a word, before any `--` and not the value of the flag before it, is found here, so that it is
 * refused whole, with the `--` form that lets it through. A value attached to a short flag that takes
 * one (`-s"You're terse"`, `-qs"You're terse"` after flags that take none) stays that flag's, unless it
 * starts with an apostrophe or a space, as "-it's cold" would give -t.
 */
import type { Command, Option } from './commander.js';

function* optionsOf(cmd: Command): Generator<Option> {
  for (let c: Command | null = cmd; c; c = c.parent) yield* c.options;
}

/** The first such word of `args` (the command line after `router`), and the command it goes to; undefined: none. */
export function dashedText(program: Command, args: readonly string[], globalWithValue: ReadonlySet<string>): { text: string; cmd: Command } | undefined {
  const cmd = commandOf(program, args, globalWithValue);
  if (!cmd?.registeredArguments.length) return undefined;
  const text = firstDashed(cmd, args);
  return text === undefined ? undefined : { text, cmd };
}

/** The command the words of an argv name (`batch` when the word after it is no subcommand). */
function commandOf(program: Command, args: readonly string[], globalWithValue: ReadonlySet<string>): Command | undefined {
  const words: string[] = [];
  for (let i = 0; i < args.length && words.length < 2; i++) {
    if (args[i] === '--') break;
    if (globalWithValue.has(args[i]!)) i++;
    else if (!args[i]!.startsWith('-')) words.push(args[i]!);
  }
  const top = program.commands.find((c) => c.name() === words[0]);
  return top?.commands.find((c) => c.name() === words[1]) ?? top;
}

function firstDashed(cmd: Command, args: readonly string[]): string | undefined {
  const options = [...optionsOf(cmd)];
  const find = (flag: string) => options.find((o) => o.short === flag || o.long === flag);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return undefined;
    if (!a.startsWith('-') || a === '-') continue;
    if (a.startsWith('--')) {
      if (!a.includes('=') && find(a)?.required) i++;
      continue;
    }
    const first = find(a.slice(0, 2));
    if (first && (first.required || first.optional)) {
      // -s VALUE, or the value attached: -sVALUE.
      if (a.length === 2 && first.required) i++;
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
    // -qs"You're terse" is -q -s; "-it's cold" (-i, then -t with "'s cold") is text.
    if (taker && !/^['\s]/.test(a.slice(j + 1))) continue;
    if (/[\s']/.test(a)) return a;
  }
  return undefined;
}
