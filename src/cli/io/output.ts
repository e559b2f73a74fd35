import type { IO } from './io.js';
import type { FencedCode } from './fenced-code.js';
import { costText, roundCost } from '../../internal/round-cost.js';
import { nounFor } from '../../internal/counted.js';
import { redactedPieces } from '../../internal/redact-text.js';
import { CliError, EXIT } from '../exit-codes.js';

/** Tokens and the cost the service reported, whatever the operation calls them. */
export interface TokenUsage {
  input: number;
  /** Absent for operations that produce no tokens (embeddings). */
  output?: number;
  total: number;
  cost?: number;
}

/** The one usage line of `--usage` (stderr): tokens and the service's reported cost, never an estimate. */
export function usageLine(u: TokenUsage | undefined, words: [string, string] = ['input', 'output']): string {
  if (!u) return 'usage: not reported';
  // As reported, to the last digit the service gives (a cost of $0.00000002 is not $0.000000).
  const cost = typeof u.cost === 'number' ? `, cost $${costText(u.cost)}` : '';
  // Digits ungrouped, as scripts read them.
  if (u.output === undefined) return `usage: ${u.input} ${nounFor(u.input, `${words[0]} token`)}${cost}`;
  return `usage: ${u.input} ${words[0]} + ${u.output} ${words[1]} = ${u.total} ${nounFor(u.total, 'token')}${cost}`;
}

/** The --usage line of a command whose MCP servers sampled: its own calls and the sampling calls summed, the sampling part said. */
export function usageWithSampling(own: TokenUsage | undefined, sampled: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cost?: number } | undefined, words?: [string, string]): string {
  if (!sampled) return usageLine(own, words);
  const s: TokenUsage = { input: sampled.prompt_tokens, output: sampled.completion_tokens, total: sampled.total_tokens, cost: sampled.cost };
  const cost = own?.cost === undefined && s.cost === undefined ? undefined : roundCost((own?.cost ?? 0) + (s.cost ?? 0));
  const sum: TokenUsage = own ? { input: own.input + s.input, output: (own.output ?? 0) + sampled.completion_tokens, total: own.total + s.total, cost } : s;
  return `${usageLine(sum, words)} (of which MCP sampling: ${usageLine(s, words).replace(/^usage: /, '')})`;
}

/**
 * The --usage line of a stream --jq halted: the service reports usage at the stream's end, which never
 * came. What it charged is known later: by `usage --reconcile` where the ledger kept the call's id.
 */
export function haltedUsageLine(id: string | undefined, logged: boolean): string {
  const cut = 'usage: not known yet: --jq halted the stream before the service reported it';
  if (!id) return `${cut}, and before it named the call`;
  return `${cut}; what ${id} was charged: ${logged ? 'router usage --reconcile puts it in the ledger' : `router generation ${id}`}`;
}

/**
 * Writes streamed pieces to stdout as they arrive (text, or JSON lines). Text ends with a newline;
 * what arrived before a failure still reaches stdout before the failure is reported.
 */
export async function streamToStdout(io: IO, pieces: AsyncIterable<string>, opts: { endLine: boolean }): Promise<void> {
  const writer = io.streamWriter();
  let last = '';
  try {
    for await (const piece of pieces) {
      if (!piece) continue;
      last = piece;
      await writer.write(piece);
    }
    if (opts.endLine && !last.endsWith('\n')) await writer.write('\n');
  } finally {
    await writer.end();
  }
}

/** A whole answer printed at once, ending with a newline. */
export function printText(io: IO, text: string): void {
  io.out(text.endsWith('\n') ? text : `${text}\n`);
}

/** Whether text for stdout is rendered as Markdown: on a terminal, unless --raw or --json (or TERM=dumb). */
export function rendersMarkdown(io: IO, opts: { raw?: boolean; json?: boolean }): boolean {
  return io.stdoutTTY && !opts.raw && !opts.json && io.env.TERM !== 'dumb';
}

type ShownOpts = { raw?: boolean; json?: boolean; extract?: boolean; extractLast?: boolean };

/** Streamed text as stdout shows it: rendered on a terminal, else exactly as received; with --extract, only its code block, as written. */
export async function shownPieces(io: IO, pieces: AsyncIterable<string>, opts: ShownOpts, cut: () => boolean = () => false): Promise<AsyncIterable<string>> {
  // A key in use that the model says back (an echo of a prompt that held it) is hidden, as router api hides it.
  if (io.secrets.length || io.marked.marks.length) pieces = redactedPieces(pieces, io.secrets, io.marked);
  if (extracts(opts)) return (await import('./fenced-code.js')).extractedPieces(pieces, !!opts.extractLast, (block) => sayExtracted(io, opts, block, cut()), cut);
  if (!rendersMarkdown(io, opts)) return pieces;
  return (await import('../markdown/index.js')).renderPieces(io, pieces);
}

/** A whole answer as stdout shows it (see shownPieces). */
export async function shownText(io: IO, text: string, opts: ShownOpts, cut = false): Promise<string> {
  text = io.redact(text);
  if (extracts(opts)) {
    const { fencedCode, shownCode } = await import('./fenced-code.js');
    const block = fencedCode(text, !!opts.extractLast);
    if (text) sayExtracted(io, opts, block, cut);
    return shownCode(text, block, cut);
  }
  if (!rendersMarkdown(io, opts)) return text;
  const md = (await import('../markdown/index.js')).terminalMarkdown(io);
  return md.push(text) + md.end();
}

const extracts = (opts: ShownOpts): boolean => !opts.json && !!(opts.extract || opts.extractLast);

const extractFlag = (opts: ShownOpts): string => (opts.extract ? '--extract' : '--extract-last');

/** What stderr says of an extracted block: none (the answer printed whole), or one the answer ended inside, never closed. A cut answer's is said by cutBlock. */
function sayExtracted(io: IO, opts: ShownOpts, block: FencedCode | undefined, cut: boolean): void {
  if (!block) io.note(`note: the answer holds no fenced code block: printed whole (${extractFlag(opts)})`);
  else if (block.open && !cut) io.note(`note: the answer ended inside its code block, never closed: ${block.code ? 'printed what came of it' : 'none of its code came'} (${extractFlag(opts)})`);
}

/**
 * With --extract, an answer cut at its length limit inside the block taken: none of its code was printed
 * (`router chat -x … | sh` would run part of a program), and the command ends with this error (exit 1),
 * once the answer is kept and counted (the note of the cut before it says how to raise the limit).
 */
export async function cutBlock(opts: ShownOpts, text: string, cut: boolean): Promise<CliError | undefined> {
  if (!cut || !extracts(opts)) return undefined;
  if (!(await import('./fenced-code.js')).fencedCode(text, !!opts.extractLast)?.open) return undefined;
  return new CliError(`${extractFlag(opts)}: the answer was cut at its length limit inside its code block: none of it was printed, as part of a program could run`, EXIT.FAILURE);
}
