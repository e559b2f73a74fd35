import { fstatSync, readdirSync, readSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { collectBounded, inputTooLarge, MAX_INPUT_BYTES } from './bounded-read.js';
import { usage } from '../exit-codes.js';
import type { IO } from './io.js';
import { readStdin, readStdinBytes } from './read-stdin.js';
import { isSystemError } from '../../internal/system-errors.js';
import { namedFileLine, namedFileStream, unreadableWhy } from '../../internal/named-input.js';
import { blankInput, isBlank, onlyBlanks } from '../../internal/blank.js';
import { utf8Text } from './utf8.js';
import type { FlagValues } from '../flags/flags.js';
import type { PROVIDER_FLAGS, ROUTING_FLAGS } from '../flags/options.js';

export interface TextOptions {
  what?: string;
  example?: string;
  /**
   * Piped stdin joins the arguments (stdin first, then the prompt, as llm and mods do).
   * Without it, stdin is read only when there are no arguments or "-" stands among them.
   */
  mergeStdin?: boolean;
  /** Said too when stdin is a terminal and nothing was given (chat: its interactive session). */
  onTerminal?: string;
  /** Said too when a piped stdin is binary (an image piped by mistake): how to attach it instead. */
  binary?: string;
}

/**
 * The prompt from arguments and stdin. "-" among the arguments stands for stdin at that place;
 * with no arguments, a piped stdin is the whole prompt.
 */
export async function textFromArgs(args: string[], io: IO, o: TextOptions = {}): Promise<string> {
  const { what = 'prompt', example = 'echo hi | router chat', mergeStdin = false, onTerminal, binary } = o;
  const dash = args.indexOf('-');
  if (args.indexOf('-', dash + 1) !== -1) throw usage(`- (the ${what}) may stand once among the arguments: stdin can be read once`);
  const taken = stdinReaders.get(io);
  if (dash !== -1) takeStdin(io, `the ${what}`, `- (the ${what})`);
  const wantsStdin = dash !== -1 || (taken === undefined && (args.length === 0 || mergeStdin) && !io.stdinTTY && !io.noStdin);
  const fileSize = wantsStdin && dash === -1 && args.length ? regularFileSize(io) : undefined;
  const raw = wantsStdin ? await stdinText(io, binary) : '';
  const piped = trimEnd(raw);
  if (fileSize !== undefined && piped && !io.quiet) noteLoopFile(io, fileSize - Buffer.byteLength(raw), fileSize);
  else if (wantsStdin && dash === -1 && args.length && piped && !io.quiet && pipeSharedWithParent(io)) noteLoopPipe(io);
  // Stdin stands where "-" does, a block of its own; a piped stdin without it comes first.
  const parts = dash === -1 ? [piped, args.join(' ')] : [args.slice(0, dash).join(' '), piped, args.slice(dash + 1).join(' ')];
  const text = parts.filter(Boolean).join('\n\n');
  // Words given, all blank: an unset "$VAR" is the likelier slip than stdin, which a message about stdin alone would blame.
  const words = args.filter((a) => a !== '-').length;
  if (!text.trim() && words) throw usage(`no ${what}: ${words === 1 ? 'the argument is' : 'the arguments are'} blank (an unset or empty "$VAR"?)${wantsStdin ? `, and ${blankInput(raw)}` : ''}`);
  if (!text.trim() && taken !== undefined) throw usage(`no ${what}: stdin was read by ${taken}; give the ${what} as arguments`);
  if (!text.trim() && io.noStdin) throw usage(`no ${what}: give it as arguments (stdin is not read: ${io.noStdin})`);
  // Asked for by "-" (or piped with nothing else given): the user did pipe, and what came was nothing.
  if (!text.trim() && wantsStdin) throw usage(`no ${what}: ${blankInput(raw)} (${example}, or give the ${what} as arguments)`);
  if (!text.trim()) throw usage(`no ${what}: give it as arguments or on stdin (${example})${onTerminal && io.stdinTTY ? `; ${onTerminal}` : ''}`);
  return text;
}

/** The text without the white space at its end, as replace(/\s+$/, '') and trimEnd() give it, and the text itself (not a copy of a 50 MB prompt) when it has none. */
function trimEnd(text: string): string {
  let end = text.length;
  while (end > 0 && /\s/.test(text[end - 1]!)) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** The size of stdin when it is a regular file (`< list`), else undefined. */
function regularFileSize(io: IO): number | undefined {
  if (io.stdinFd === undefined) return undefined;
  try {
    const st = fstatSync(io.stdinFd);
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stdin a file read from its middle, with a prompt in the arguments: most likely a `while read` loop over
 * that file, whose rest has just gone with this prompt (the loop then ends after this call), said, not done in silence.
 */
function noteLoopFile(io: IO, start: number, size: number): void {
  // A whole file that opens with a byte-order mark: its 3 bytes were read, then dropped from the text.
  if (start <= 0 || (start === 3 && startsWithBom(io.stdinFd!))) return;
  io.note(`note: stdin is a file this call read from byte ${start} of ${size} on, as in a while-read loop over it: the rest went with the prompt, and the loop gets none of it; --no-stdin (or ROUTER_NO_STDIN=1) leaves stdin to the loop`);
}

/**
 * Whether stdin is a pipe that the process which started this one reads too (Linux's /proc tells): a `while
 * read` loop's (`cat list | while read f; do …; done`), whose shell reads the pipe after this call, as its stdin
 * (bash, zsh) or on a descriptor of its own (fish). A pipe given to this command alone (`echo x | router chat
 * "summarise"`) is the shell's to no one. Asked once stdin has ended: a parent still holding a write end would
 * have kept it from ending, so any descriptor of the pipe the parent holds is one it reads.
 */
function pipeSharedWithParent(io: IO): boolean {
  // stdinFd is set for the process's own stdin only (not a test's streams): its parent is process.ppid.
  const fd = io.stdinFd;
  if (fd === undefined || process.platform !== 'linux') return false;
  try {
    const ours = fstatSync(fd);
    if (!ours.isFIFO()) return false;
    const fds = `/proc/${process.ppid}/fd`;
    return readdirSync(fds).some((n) => {
      try {
        const theirs = statSync(`${fds}/${n}`);
        return theirs.ino === ours.ino && theirs.dev === ours.dev;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/** Stdin a pipe the calling shell reads too, with a prompt in the arguments: most likely a `while read` loop's list, said as noteLoopFile says a file's. */
function noteLoopPipe(io: IO): void {
  io.note('note: stdin is a pipe the shell that ran this command reads too, as a while-read loop over it does: what was left of it went with the prompt, and the loop gets none of it; --no-stdin (or ROUTER_NO_STDIN=1) leaves stdin to the loop, and a "-" among the words takes it as meant, without this note (as a script handing on its own piped stdin means it: router chat "summarise" -)');
}

/** Whether the file at `fd` opens with a UTF-8 byte-order mark (read at its start: the file's offset stays where it is). */
function startsWithBom(fd: number): boolean {
  const head = Buffer.alloc(3);
  try {
    return readSync(fd, head, 0, 3, 0) === 3 && head.equals(Buffer.from([0xef, 0xbb, 0xbf]));
  } catch {
    return false;
  }
}

/** Stdin as the prompt's text; a file piped by mistake (an image, a PDF) is refused naming its type and `binary`, the way to attach it. */
async function stdinText(io: IO, binary: string | undefined): Promise<string> {
  if (!binary || io.noStdin) return readStdin(io, io.interrupt);
  const bytes = await readStdinBytes(io, io.interrupt);
  try {
    return utf8Text(bytes, 'stdin');
  } catch (err) {
    const type = (await import('../../kit/attachments.js')).sniff(bytes)?.[1];
    if (type && err instanceof Error) err.message += `; it is ${type}: ${binary}`;
    throw err;
  }
}

/** Who read stdin in a run (a flag, or the prompt): stdin can be read once. */
const stdinReaders = new WeakMap<IO, string>();

/** Takes stdin for `who`; a second reader is refused, named as the user typed it (`label`), before anything is sent. */
export function takeStdin(io: IO, who: string, label = who): void {
  if (io.noStdin) throw usage(`${label}: stdin is not read (${io.noStdin})`);
  const first = stdinReaders.get(io);
  if (first !== undefined) throw usage(`${label}: stdin was read by ${first}; it can be read once`);
  stdinReaders.set(io, who);
}

/**
 * The one convention for "@" in a text flag, as `router api -F` and curl have it: "@FILE" is the
 * file's text, "@-" stdin, and "@@…" the text "@…" itself.
 */
export async function textOrFile(flag: string, value: string | undefined, io: IO): Promise<string | undefined> {
  if (value === undefined || !value.startsWith('@')) return value;
  if (value.startsWith('@@')) return value.slice(1);
  if (value === '@-') takeStdin(io, flag, `${flag} @-`);
  const text = value === '@-' ? await readStdin(io, io.interrupt) : await readTextFile(flag, value.slice(1), io);
  if (!text.trim()) throw usage(value === '@-' ? `${flag} @-: ${blankInput(text)} (pipe the text in, or give ${flag} TEXT)` : `${flag}: ${blankInput(text, value.slice(1))}`);
  return text;
}

/** Reads a text file ("-" for stdin) with a one-line error naming the flag. */
export async function readTextFile(flag: string, path: string, io: IO): Promise<string> {
  if (path === '-') takeStdin(io, flag, `${flag} -`);
  return path === '-' ? readStdin(io, io.interrupt) : utf8Text(await readFileFor(flag, path, io.interrupt), `${flag}: ${path}`);
}

/**
 * Reads a file a flag names, or fails with one line naming the flag and why, in words. A file
 * over the input bound is refused by its size; a device or pipe (/dev/zero) once it has sent that much.
 */
export async function readFileFor(flag: string, path: string, signal?: AbortSignal, limit?: { max: number; tooMuch: () => Error }): Promise<Buffer> {
  if (isBlank(path)) throw usage(`${flag}: the path is empty`);
  const what = `${flag}: ${path}`;
  const { max, tooMuch } = limit ?? { max: MAX_INPUT_BYTES, tooMuch: () => inputTooLarge(what) };
  try {
    const st = await stat(path);
    if (st.isFile() && st.size > max) throw tooMuch();
    return await collectBounded(await namedFileStream(path, st), what, signal, max, tooMuch);
  } catch (err) {
    // Only the system's failures are said here (a bound's error, a kit error with a `code` of its own, goes on as it is).
    if (!isSystemError(err) || signal?.aborted) throw err;
    throw usage(namedFileLine(flag, path, unreadableWhy(err.code)));
  }
}

/** Reads a JSON file ("-" for stdin) with a one-line error naming the flag. */
/** Nothing to parse (a file or pipe of blank lines) is said as such, not as JSON's "Unexpected end of JSON input". */
export function refuseBlankJson(flag: string, path: string, text: string): void {
  if (onlyBlanks(text)) throw usage(path === '-' ? `${flag} -: ${blankInput(text)}` : `${flag}: ${blankInput(text, path)}`);
}

export async function readJsonFile(flag: string, path: string, io: IO): Promise<unknown> {
  const text = await readTextFile(flag, path, io);
  refuseBlankJson(flag, path, text);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw usage(`${flag}: ${path} is not valid JSON (${(err as Error).message})`);
  }
}

/** The spec's metadata rules: at most 16 pairs, keys up to 64 characters without brackets, values up to 512. */
export function checkMetadataFlags(metadata: Record<string, string> | undefined): void {
  if (!metadata) return;
  const entries = Object.entries(metadata);
  if (entries.length > 16) throw usage('--metadata may be given at most 16 times');
  for (const [k, v] of entries) {
    if (k.length > 64) throw usage(`--metadata key "${k.slice(0, 20)}…" is longer than 64 characters`);
    if (/[[\]]/.test(k)) throw usage(`--metadata key "${k}" must not contain brackets`);
    if (v.length > 512) throw usage(`--metadata value of "${k}" is longer than 512 characters`);
  }
}

export type ProviderFlags = FlagValues<typeof PROVIDER_FLAGS>;

export function providerFrom(o: ProviderFlags): Record<string, unknown> | undefined {
  const provider: Record<string, unknown> = {};
  if (o.providerOnly) provider.only = o.providerOnly;
  if (o.providerOrder) provider.order = o.providerOrder;
  if (o.providerIgnore) provider.ignore = o.providerIgnore;
  if (o.fallbacks === false) provider.allow_fallbacks = false;
  return Object.keys(provider).length ? provider : undefined;
}

/** The routing and observability fields chat and responses share: session, metadata, user, provider. */
export function applyRouting(req: Record<string, unknown>, o: FlagValues<typeof ROUTING_FLAGS>): void {
  if (o.session) req.session_id = o.session;
  if (o.metadata) req.metadata = o.metadata;
  if (o.user) req.user = o.user;
  const provider = providerFrom(o);
  if (provider) req.provider = provider;
}
