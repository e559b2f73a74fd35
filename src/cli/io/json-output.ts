/**
 * JSON output for scripts, as gh does it: `--json FIELDS` keeps only those top-level fields (of each
 * item, for lists) and `--jq EXPR` filters the output with jq (built in; raw strings unquoted).
 */
import type { Command, Option } from '../commander.js';
import { CliError, EXIT, usage, type ExitCode } from '../exit-codes.js';
import { didYouMean } from '../../internal/did-you-mean.js';
import { takesNextWord } from '../flags/value-word.js';

/** What `--json FIELDS` is checked against: the command's path and its definition's fields. */
export interface JsonTarget {
  path: string;
  fields: readonly string[];
  /** The command takes no argument: any word after its `--json` is a field list. */
  noArguments: boolean;
}

/** The words of the command path an argv runs ("batch get"), skipping global options: the first two. */
export function commandWords(args: string[], withValue: Set<string>): string[] {
  const words: string[] = [];
  for (let i = 0; i < args.length && words.length < 2; i++) {
    const a = args[i]!;
    if (takesNextWord(a, withValue)) i++;
    else if (!a.startsWith('-')) words.push(a);
  }
  return words;
}

/** A word that reads as a list of fields: names joined by commas, one of them a field ("id,tunrs"); no prompt or search reads so. */
const fieldList = (word: string, known: readonly string[]) => {
  const names = word.split(',');
  return names.every((f) => known.includes(f)) || (names.length > 1 && names.every((f) => /^[a-z][a-z0-9_]*$/i.test(f)) && names.some((f) => known.includes(f)));
};

/**
 * `--json=FIELDS`, and `--json FIELDS` when it reads as a list of the command's fields (a mistyped one
 * is then refused with a guess), become `--json --json-fields FIELDS`; any other word after `--json`
 * stays an argument (a prompt, an id, a search word).
 */
export function rewriteJsonFields(args: string[], target: JsonTarget | undefined): string[] {
  const known = target?.fields;
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return [...out, ...args.slice(i)];
    if (a.startsWith('--json=')) out.push('--json', '--json-fields', a.slice(7));
    else if (a === '--json' && known && args[i + 1] !== undefined && !args[i + 1]!.startsWith('-') && (target.noArguments || fieldList(args[i + 1]!, known))) {
      out.push('--json', '--json-fields', args[++i]!);
    } else out.push(a);
  }
  return out;
}

/** Adds `--jq` (and the hidden `--json-fields`) to every command of the tree that has `--json`. */
export function addJsonFlags(cmd: Command, OptionClass: new (flags: string, description?: string) => Option): void {
  const json = cmd.options.find((o) => o.long === '--json');
  if (json) {
    // Said where --json is, so that --help shows what the docs promise.
    json.description += '; --json=FIELDS (comma-separated) keeps only those fields';
    cmd.addOption(new OptionClass('--jq <expr>', 'filter the JSON output with a jq expression (implies --json; strings print raw)'));
    cmd.addOption(new OptionClass('--json-fields <list>').hideHelp());
  }
  for (const sub of cmd.commands) addJsonFlags(sub, OptionClass);
}

export interface JsonShape {
  fields?: string[];
  jq?: string;
}

/** A guess for a mistyped field: the one it begins (`stat` is status), else the nearest. */
function fieldHint(field: string, known: readonly string[]): string {
  const begun = field.length >= 2 ? known.filter((k) => k.startsWith(field.toLowerCase())) : [];
  if (begun.length === 1) return ` (did you mean ${begun[0]}?)`;
  if (begun.length > 1) return ` (did you mean one of ${begun.join(', ')}?)`;
  return didYouMean(field, known);
}

/**
 * The word after a plain `--json` that was taken as an argument (a search word, a prompt) while it
 * looks like a mistyped field: a note saying how it was read and how to give it as a field.
 */
export function argumentNotField(path: string, args: readonly string[], known: readonly string[] | undefined): string | undefined {
  const at = args.indexOf('--json');
  const word = at >= 0 ? args[at + 1] : undefined;
  if (!known || word === undefined || args.slice(0, at).includes('--') || !/^[a-z][a-z0-9_]*$/i.test(word) || known.includes(word)) return undefined;
  const hint = fieldHint(word, known);
  return hint ? `note: "${word}" after --json is read as an argument of "${path}", not as a field${hint.replace('Did', 'did')}; fields go as --json=FIELDS` : undefined;
}

/** Checks `--json FIELDS` against the command's fields: a usage error naming the fields there are. */
export function checkedFields(path: string, known: readonly string[] | undefined, list: string): string[] {
  const fields = list.split(',').map((f) => f.trim()).filter(Boolean);
  const unknown = known ? fields.filter((f) => !known.includes(f)) : [];
  if (!fields.length || unknown.length) throw usage(`${unknown.length ? `unknown JSON field "${unknown[0]}"${fieldHint(unknown[0]!, known!)}` : 'no JSON fields named'}; fields of "${path}": ${(known ?? []).join(', ')}`);
  return fields;
}

function pick(value: unknown, fields: string[]): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const o = value as Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => f in o).map((f) => [f, o[f]]));
}

/**
 * Only the named fields: of each element of an array; of each item of a list page (unless the
 * fields are the page's own, as an embeddings answer's `model,usage`); else of the object.
 */
export function selectFields(value: unknown, fields: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => pick(v, fields));
  const o = value as { object?: unknown; data?: unknown } | null;
  if (o && o.object === 'list' && Array.isArray(o.data) && !fields.some((f) => f in o)) return { ...o, data: o.data.map((v) => pick(v, fields)) };
  return pick(value, fields);
}

const jqMessage = (err: unknown) =>
  String((err as Error)?.message ?? err)
    // jq-wasm's runtime aborted: a filter that recursed without end, or a value too large for its memory.
    .replace(/^Aborted\(\).*/, 'jq ran out of stack or memory (a filter that recurses without end, or a value too large)')
    .split('\n')[0]!
    .replace(/^jq: error(?: \(at [^)]*\))?(?: \(not a string\))?: /, '')
    .replace(/ \(Unix shell quoting issues\?\)/, '')
    .replace(/:$/, '');

/** A jq expression that does not compile is refused before anything is sent. */
export async function checkJq(expr: string, signal?: AbortSignal): Promise<void> {
  const { runJqWorker } = await import('./jq-run.js');
  try {
    await runJqWorker('null', expr, [], signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    const text = String((err as Error)?.message ?? err);
    if (/compile error/.test(text)) throw usage(`--jq: ${jqMessage(err)}`);
  }
}

/**
 * Runs the expression over one JSON value (raw strings unquoted, compact unless a terminal), its
 * output given to `write`: all of it, then what jq said on stderr given to `say` as jq's CLI prints it
 * (`debug`'s `["DEBUG:",…]`, `stderr`'s text, `halt_error`'s text: a string raw, else JSON), then,
 * when jq ended in an error (`error`), that error. `halt_error(N)` ends the command with exit N; true
 * when the filter halted (`halt`, `halt_error(0)`): nothing after this value goes through jq.
 */
export function runJq(value: unknown, expr: string, tty: boolean, write: (text: string) => Promise<void>, signal?: AbortSignal, say?: (text: string) => void): Promise<boolean> {
  return runJqOver(JSON.stringify(value), expr, tty, write, signal, say);
}

/**
 * runJq over a stream of JSON texts (one a line), as `jq` reads its stdin: each value is `.` in turn,
 * and `input`/`inputs` read the ones after it.
 */
export async function runJqOver(texts: string, expr: string, tty: boolean, write: (text: string) => Promise<void>, signal?: AbortSignal, say: (text: string) => void = () => {}): Promise<boolean> {
  const { runJqStream } = await import('./jq-run.js');
  let ran: Awaited<ReturnType<typeof runJqStream>>;
  // jq says nothing of a `halt` (exit 0): a mark said after the filter's outputs, which a halt never reaches, tells it.
  const halts = HALTS.test(expr);
  try {
    ran = await runJqStream(texts, halts ? `(${expr}\n), (${JSON.stringify(RAN_TO_END)} | stderr | empty)` : expr, tty ? ['-r'] : ['-r', '-c'], signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new CliError(`--jq: ${jqMessage(err)}`, EXIT.FAILURE);
  }
  await write(ran.out);
  const ranToEnd = halts && ran.err.endsWith(RAN_TO_END);
  if (ranToEnd) ran.err = ran.err.slice(0, -RAN_TO_END.length);
  const at = ran.err.search(/^jq: error/m);
  const said = at < 0 ? ran.err : ran.err.slice(0, at);
  if (said) say(said);
  if (ran.status === 0) return halts && !ranToEnd && at < 0;
  if (at >= 0) throw new CliError(`--jq: ${jqMessage(ran.err.slice(at))}`, EXIT.FAILURE);
  // halt_error: its text said above; jq's exit status is the command's, as `jq` exits.
  throw new CliError(`--jq: halt_error(${ran.status})`, ran.status as ExitCode, undefined, []);
}

/** A filter that may stop jq (as `jq` stops reading its input): runJq says whether it did. */
const HALTS = /(?<![.$\w])halt(?:_error)?(?!\w)/;
const RAN_TO_END = '\u001erouter: --jq ran to its end\u001e';

/** A filter that looks past its own value (input_line_number, halt): it runs on each value alone. (One that reads input or inputs runs once over all: jq-queue.ts.) */
const SEES_OTHERS = /(?<![.$\w])(?:input_line_number|halt|halt_error)(?!\w)/;
/** The JSON text of the values one run of jq takes at most (a stream's chunks are a few hundred bytes each). */
const RUN_CHARS = 4_000_000;

/**
 * Runs the expression over each value in turn, each one's output after the last's, given to `write`:
 * one run of jq over many values (jq's stream of inputs, as `| jq` reads a stream of JSON lines), not
 * a run each (a stream of thousands of chunks: each run starts jq anew, ~1 ms). A run that says
 * anything on stderr (an error, `debug`) is done again value by value, which fails or says it where
 * the value is, as before.
 */
export async function runJqEach(values: unknown[], expr: string, tty: boolean, write: (text: string) => Promise<void>, signal?: AbortSignal, say?: (text: string) => void): Promise<boolean> {
  const one = (value: unknown) => runJq(value, expr, tty, write, signal, say);
  if (values.length < 2 || SEES_OTHERS.test(expr)) {
    // A halt ends jq's input: the values after it are not run, as `jq` reads no more.
    for (const value of values) if (await one(value)) return true;
    return false;
  }
  const { runJqStream } = await import('./jq-run.js');
  for (let i = 0; i < values.length; ) {
    const texts: string[] = [];
    for (let chars = 0; i < values.length && (texts.length === 0 || chars < RUN_CHARS); i++) {
      const text = JSON.stringify(values[i]);
      texts.push(text);
      chars += text?.length ?? 0;
    }
    const ran = await runJqStream(texts.join('\n'), expr, tty ? ['-r'] : ['-r', '-c'], signal).catch((err: unknown) => {
      if (signal?.aborted) throw err;
    });
    if (ran && ran.status === 0 && !ran.err) await write(ran.out);
    else for (const value of values.slice(i - texts.length, i)) await one(value);
  }
  return false;
}
