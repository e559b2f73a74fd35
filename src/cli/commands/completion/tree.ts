import type { Command, Option } from '../../commander.js';
import { dynamicOf, valuesOf, type DynamicKind } from '../../flags/flags.js';
import { argCompletion } from '../../define.js';

export type { DynamicKind };

export interface Flag {
  name: string;
  short?: string;
  summary: string;
  takesValue: boolean;
  /** Its value may be left out (`--results [file]`): commander takes the next word only when it is no flag. */
  optionalValue?: boolean;
  choices?: readonly string[];
  dynamic?: DynamicKind;
  /** Its value names a file, folder or command (`<file>`, `[file]`, `<dir>`, `<path|url|->`, `<command|url>`): shells offer files. */
  files?: boolean;
}

/** A value placeholder, required (`<file>`) or optional (`[file]`), that names something on disk. */
const FILE_VALUE = /[<[][^>\]]*\b(file|dir|path|command)\b[^>\]]*[>\]]/;

/** The flag names that take a value no shell can guess (no choices, nothing asked of router, no file): plain, and with files. */
export function valueFlagNames(nodes: Node[]): { files: string[]; plain: string[] } {
  const names = (keep: (f: Flag) => boolean) => new Set(nodes.flatMap((n) => n.flags.filter((f) => f.takesValue && !f.choices && !f.dynamic && keep(f)).flatMap((f) => [f.name, f.short].filter(Boolean) as string[])));
  const files = names((f) => !!f.files);
  // A name that takes a file under any command is offered files under all (the scripts branch on the name alone).
  return { files: [...files], plain: [...names((f) => !f.files)].filter((n) => !files.has(n)) };
}

/** Every name (long and short) of a flag that takes its value from the next word: required, and optional. */
export function flagsTakingValues(nodes: Node[]): { required: string[]; optional: string[] } {
  const names = (keep: (f: Flag) => boolean) => [...new Set(nodes.flatMap((n) => n.flags.filter((f) => f.takesValue && keep(f)).flatMap((f) => [f.name, f.short].filter(Boolean) as string[])))];
  return { required: names((f) => !f.optionalValue), optional: names((f) => !!f.optionalValue) };
}

export interface Node {
  path: string;
  summary: string;
  subcommands: { name: string; summary: string }[];
  flags: Flag[];
  /** What the first positional argument completes to. */
  arg?: { choices?: readonly string[]; dynamic?: DynamicKind; files?: boolean };
}

/** Walks the commander tree: every visible command path with its subcommands, flags and argument. */
export function commandTree(program: Command): Node[] {
  const nodes: Node[] = [];
  const globals = program.options as readonly Option[];
  // Commands named __… are the scripts' own (router __complete), never offered.
  const visible = (c: Command) => c.name() !== 'help' && !c.name().startsWith('__');
  const visit = (cmd: Command, path: string) => {
    const own = cmd === program ? [] : (cmd.options as readonly Option[]);
    const flags: Flag[] = [...own, ...globals]
      .filter((o) => o.long && !o.hidden)
      .map((o) => ({ name: o.long!, short: o.short, summary: o.description, takesValue: o.required || o.optional, optionalValue: o.optional || undefined, choices: valuesOf(o), dynamic: dynamicOf(o), files: FILE_VALUE.test(o.flags) }));
    flags.push({ name: '--help', short: '-h', summary: 'display help', takesValue: false });
    const subs = cmd.commands.filter(visible).map((c) => ({ name: c.name(), summary: c.summary() || c.description() }));
    const first = (cmd.registeredArguments ?? [])[0];
    const kind = first && argCompletion(first);
    const arg = kind === 'files' ? { files: true } : kind ? { dynamic: kind } : first?.argChoices ? { choices: first.argChoices } : undefined;
    nodes.push({ path, summary: cmd.summary() || cmd.description(), subcommands: subs, flags, arg });
    for (const c of cmd.commands) if (visible(c)) visit(c, path ? `${path} ${c.name()}` : c.name());
  };
  visit(program, '');
  return nodes;
}

/** Single-quoted for any POSIX shell (and fish). */
export const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The body of bash's and zsh's loop over the words before the cursor (`$w`), walked as commander parses: a flag's
 * value (`-p NAME`, `-qp NAME`) is never a subcommand, a word extends `$cmdpath` only where it names one, and `--`
 * ends the walk. bash splits `--profile=NAME` at the `=` (COMP_WORDBREAKS): the value follows it.
 */
export function shellPathWalk(nodes: Node[]): string {
  const values = flagsTakingValues(nodes);
  const longs = (names: string[]) => names.filter((n) => n.startsWith('--')).map(q).join('|');
  const shorts = values.required.filter((n) => !n.startsWith('--')).map(q).join('|');
  return `    [[ $w == '=' && $skip == 1 ]] && continue
    if [[ $skip == 1 ]]; then skip=""; continue; fi
    if [[ $skip == optional ]]; then skip=""; [[ $w == -* ]] || continue; fi
    case $w in
      (--) break ;;
      (--*=*) ;;
      (${longs(values.required)}) skip=1 ;;
      (${longs(values.optional)}) skip=optional ;;
      (-[!-]*)
        for ((j = 1; j < \${#w}; j++)); do
          case "-\${w:$j:1}" in
            (${shorts}) ((j + 1 == \${#w})) && skip=1; break ;;
          esac
        done ;;
      (-*) ;;
      (*)
        cand="\${cmdpath:+$cmdpath }$w"
        case $cand in
          (${nodes.filter((n) => n.path).map((n) => q(n.path)).join('|')}) cmdpath=$cand ;;
        esac ;;
    esac`;
}

/** The argument's completion as one word the scripts branch on: dynamic:KIND, choices:A B C, files, or empty. */
export function argKind(n: Node): string {
  if (n.arg?.dynamic) return `dynamic:${n.arg.dynamic}`;
  if (n.arg?.choices) return `choices:${n.arg.choices.join(' ')}`;
  return n.arg?.files ? 'files' : '';
}
