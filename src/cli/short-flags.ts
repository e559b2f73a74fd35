/**
 * Short flags run together (`-cq`, `-qcm local/echo`) where each is valid: commander reads a cluster
 * only as far as the first letter the command parsing it knows, so `router chat -cq` (-c chat's,
 * -q the program's) was "unknown option '-q'". Such a word is given to commander flag by flag; a
 * letter no command on the way knows leaves the word as it is, for commander to refuse (or for an
 * argument such as -5). The first flag that takes a value takes the rest of the word, or the next.
 */
import type { Command, Option } from './commander.js';
import { commandOf } from './dashed-text.js';
import { paramValue } from './flags/options.js';

export function splitShortFlags(program: Command, args: readonly string[], globalWithValue: ReadonlySet<string>): string[] {
  const options: Option[] = [];
  for (let c: Command | null = commandOf(program, args, globalWithValue) ?? program; c; c = c.parent) options.push(...c.options);
  const find = (flag: string) => options.find((o) => o.short === flag || o.long === flag);
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    const split = /^-[^-]{2,}/.test(a) ? cluster(a, find) : undefined;
    out.push(...(split?.flags ?? [a]));
    // A flag that takes a value, given apart (last in its cluster, or alone), takes the next word whatever it is.
    const last = split ? split.taker : /^-[^-]$|^--[^=]+$/.test(a) ? find(a) : undefined;
    if (last?.required && i + 1 < args.length) out.push(args[++i]!);
    // llm's --param NAME VALUE: two words, made the one NAME=VALUE --param takes.
    if (last?.parseArg === paramValue && !out[out.length - 1]!.includes('=') && i + 1 < args.length) out.push(`${out.pop()!}=${args[++i]!}`);
  }
  return out;
}

/** The flags of `-abc`, if each letter is a flag; `taker`: the last one, when it takes its value from the next word. */
function cluster(word: string, find: (flag: string) => Option | undefined): { flags: string[]; taker?: Option } | undefined {
  const flags: string[] = [];
  for (let j = 1; j < word.length; j++) {
    const option = find(`-${word[j]}`);
    if (!option) return undefined;
    if (!option.required && !option.optional) {
      flags.push(`-${word[j]}`);
      continue;
    }
    // -mlocal/echo: the rest of the word is the value (commander reads an attached one so too).
    if (j === 1) return undefined;
    flags.push(`-${word.slice(j)}`);
    return { flags, ...(j === word.length - 1 ? { taker: option } : {}) };
  }
  return { flags };
}
