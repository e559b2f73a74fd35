/** The tool loop of chat (and chat -i): runs the model's calls through src/kit and asks again with their results. */
import type { ChatMessage } from '../../client/types.js';
import type { AssembledMessage } from '../answers/answer-extras.js';
import type { IO } from '../io/io.js';
import type { ToolSet } from '../../kit/toolset.js';
import { ResultBudget, runToolCall, type CallOutcome, type ToolCallRequest } from '../../kit/tool-calls.js';
import type { ToolProgress } from '../../kit/tool.js';
import { chatToolLoop } from '../../kit/tool-loop.js';
import { approved, callsNotRun, DEFAULT_TOOL_TIMEOUT, shownCall, type ShownCall } from './tool-runner.js';
import { counted, grouped } from '../../internal/counted.js';
import { visible } from '../../internal/visible.js';
import { stringsOf } from '../../internal/arguments-without-keys.js';
import { firstWords } from '../../internal/first-words.js';

export interface ToolLoop {
  set: ToolSet;
  maxRounds: number;
  /** --approve: ask on the terminal before each call (true), or ask with this (chat -i: between its own keys). */
  approve: boolean | ((call: ShownCall) => Promise<boolean>);
  json: boolean;
  signal: AbortSignal;
  /** --tool-timeout (or, without it, --timeout), in seconds. */
  timeout?: number;
  /** The flag that set `timeout` (--tool-timeout, or --timeout standing in for it), as messages name it. */
  timeoutFlag?: string;
  /** The bound of all results of this loop (one per command; the REPL keeps one per turn). */
  budget?: ResultBudget;
  /** Whether the model takes images (its catalog entry): images from tools are sent only then. */
  takesImages?: () => Promise<boolean>;
}

/**
 * The images of a round's results, when the model takes them; else none, said on stderr and to the
 * model (its last result gets a line), as a model that takes text only would refuse the request.
 */
export async function passedImages(io: IO, loop: ToolLoop, outcomes: CallOutcome[]) {
  const images = outcomes.flatMap((o) => o.images ?? []);
  if (!images.length || (loop.takesImages && (await loop.takesImages().catch(() => false)))) return images;
  const last = outcomes.at(-1)!;
  last.text += `\n[router: ${counted(images.length, 'image')} from the tools not passed on: the model takes no image input]`;
  io.note(`warning: ${counted(images.length, 'image')} from the tools not passed on: the model takes no image input`);
  return [];
}

const label = (o: CallOutcome, flag: string) => (o.status === 'ok' ? (o.code === undefined ? 'ok' : 'exit 0') : o.status === 'failed' ? (o.code === undefined ? 'failed' : `exit ${o.code}`) : o.status === 'timeout' ? `stopped at ${flag}` : o.status);

const PREVIEW = 200;

/** How far a call has come, in words: `2/5`, the tool's message after it (keys hidden before it is cut). */
const progressWords = (io: IO, u: ToolProgress) => [u.progress === undefined ? '' : u.total === undefined ? String(u.progress) : `${u.progress}/${u.total}`, visible(firstWords(io.redact(u.message ?? ''), PREVIEW))].filter(Boolean).join(' ');

/** A long call's progress as status lines: one when its words change, at most one a second (but the last step's), so a flood of updates is a few lines. */
function progressLines(io: IO): (call: ToolCallRequest, update: ToolProgress) => void {
  let said = '';
  let at = 0;
  return (call, update) => {
    const line = `tool ${call.name}: ${progressWords(io, update)}`;
    const last = update.total !== undefined && update.progress !== undefined && update.progress >= update.total;
    if (line === said || (!last && Date.now() - at < 1000)) return;
    said = line;
    at = Date.now();
    io.info(line);
  };
}

/** A tool's result on one line: keys hidden, control characters (line ends too) escaped, the first 200 characters and its length past them. */
function resultPreview(io: IO, text: string): string {
  const shown = io.redact(text);
  const line = visible(shown.slice(0, PREVIEW));
  return shown.length > PREVIEW ? `${line}… (${grouped(text.length)} characters)` : line;
}

/** The runs (their IO) already told that a tool call's arguments held a key: it is said once a run. */
const toldKeysHidden = new WeakSet<IO>();

/** Says once a run that a call's arguments held a key router knows, which the tool got as `****` (docs/keys.md). */
function sayKeysHidden(io: IO): void {
  if (toldKeysHidden.has(io)) return;
  toldKeysHidden.add(io);
  io.note('warning: the model wrote a key router knows (****) into a tool call: the tool was given **** in its place');
}

const asker = (io: IO, loop: ToolLoop) => (typeof loop.approve === 'function' ? loop.approve : loop.approve ? (c: ShownCall) => approved(io, c) : undefined);

/**
 * One round: every call run (after --approve's question), a line each on stderr, and the facts a
 * user needs said even when piped: a command not found or failed, a call stopped at --tool-timeout, results cut.
 * A call of a tool router cannot run ends the command with the calls printed (exit 11).
 */
export async function runRound(io: IO, loop: ToolLoop, calls: ShownCall[], round: number): Promise<CallOutcome[]> {
  const missing = calls.find((c) => !loop.set.tools.has(c.name));
  if (missing || round > loop.maxRounds) {
    const why = !missing ? `--max-tool-rounds ${loop.maxRounds} reached` : loop.set.declared.some((d) => d.name === missing.name) ? `${missing.name} has no "command" in --tools` : `there is no tool named ${missing.name}`;
    throw callsNotRun(io, calls, why, loop.json);
  }
  loop.budget ??= new ResultBudget();
  const timeoutMs = (loop.timeout ?? DEFAULT_TOOL_TIMEOUT) * 1000;
  const timeoutName = (loop.timeout !== undefined && loop.timeoutFlag) || '--tool-timeout';
  const out: CallOutcome[] = [];
  for (const call of calls) {
    // Every key the run knows is hidden in the arguments, one found by its keychain mark too (learn adds it).
    io.marked.learn(stringsOf(call.arguments));
    const o = await runToolCall(loop.set.tools, call, { signal: loop.signal, timeoutMs, timeoutName, budget: loop.budget, approve: asker(io, loop), secrets: [...io.secrets], progress: progressLines(io) });
    if (o.keysHidden) sayKeysHidden(io);
    io.info(`tool ${shownCall(call)} -> ${label(o, timeoutName)}`);
    // As llm's --td: with --verbose, what went back to the model, on one line.
    if (io.verbose) io.info(`  result: ${resultPreview(io, o.text)}`);
    // What a command logged on stderr, shown where its call is (as a hook's stderr is): the model never gets it.
    if (o.log) io.info(`  stderr: ${resultPreview(io, o.log)}`);
    if (o.code === 127) io.note(`warning: tool ${call.name}: its command was not found (exit 127)${o.notRunnable ? `: ${o.notRunnable}` : ''}`);
    else if (o.code === 126) io.note(`warning: tool ${call.name}: its command could not be run (exit 126): ${o.notRunnable ?? 'is it executable (chmod +x)?'}`);
    else if (o.status === 'failed') io.note(`warning: tool ${call.name} failed${o.code === undefined ? '' : ` (exit ${o.code})`}: what it said went to the model`);
    for (const b of o.binary ?? []) io.note(`warning: tool ${call.name}: its ${b.stream} is ${counted(b.size, 'byte')} of binary data, not text: the model was told so, not sent the bytes`);
    for (const c of o.outputCut ?? []) io.note(`warning: tool ${call.name}: its ${c.stream} was cut: the model got the first ${counted(c.kept, 'byte')} of ${grouped(c.size)}`);
    if (o.status === 'timeout') io.note(`warning: tool ${call.name} ran past ${timeoutName} ${timeoutMs / 1000}s and was stopped`);
    if (o.cut) io.note(`warning: the result of ${call.name} was cut: the tool results of one chat keep at most ${loop.budget.limit / 1024 / 1024} MiB together`);
    out.push(o);
  }
  return out;
}

/** Runs the model's calls (src/kit's loop, a round at a time through runRound) and asks again with their results until it answers in text. */
export function toolLoop<A extends { message: AssembledMessage }>(io: IO, loop: ToolLoop, messages: ChatMessage[], first: A, ask: (messages: ChatMessage[]) => Promise<A>): Promise<A> {
  return chatToolLoop(messages, first, ask, { run: (calls, round) => runRound(io, loop, calls, round), images: (outcomes) => passedImages(io, loop, outcomes) });
}
