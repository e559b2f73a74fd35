/** `chat --tools FILE`: function tools, some with a local `command` that router runs when the model calls them. */
import type { ChatMessage } from '../client/types.js';
import type { AssembledMessage, ToolCall } from './answer-extras.js';
import { CliError, EXIT, usage } from './exit-codes.js';
import { readJsonFile } from './input.js';
import { parametersProblem } from './schema-check.js';
import type { IO } from './io.js';
import { visible } from '../internal/visible.js';

type Body = Record<string, unknown>;

export interface LocalTools {
  /** The tools as the service takes them: `command` removed. */
  wire: Body[];
  /** Tool name → its command (a shell line, or an argv array). */
  commands: Map<string, string | string[]>;
}

/** The most of a command's output sent back to the model. */
const MAX_RESULT_BYTES = 1024 * 1024;

/** Reads --tools: an array of function tools in the service's shape, each with an optional "command". */
export async function loadTools(path: string | undefined, io: IO): Promise<LocalTools | undefined> {
  if (path === undefined) return undefined;
  const tools = await readJsonFile('--tools', path, io);
  if (!Array.isArray(tools) || tools.length === 0) throw usage('--tools must hold a JSON array of at least one tool');
  const commands = new Map<string, string | string[]>();
  const names = new Set<string>();
  const wire = tools.map((t: Body, i) => {
    if (!t || typeof t !== 'object' || Array.isArray(t)) throw usage(`--tools: tool ${i + 1} is not an object`);
    const { command, ...tool } = t;
    const fn = tool.function as Body | undefined;
    if (tool.type !== 'function' || !fn || typeof fn.name !== 'string' || !fn.name) throw usage(`--tools: tool ${i + 1} must be {"type": "function", "function": {"name", "description", "parameters"}}`);
    // A call names its tool: two of one name (with a command or not) could not be told apart.
    if (names.has(fn.name)) throw usage(`--tools: two tools are named ${fn.name}`);
    names.add(fn.name);
    if (command !== undefined) {
      const ok = (typeof command === 'string' && command.trim() !== '') || (Array.isArray(command) && command.length > 0 && command.every((a) => typeof a === 'string'));
      if (!ok) throw usage(`--tools: the command of ${fn.name} must be a shell line or an array of arguments`);
      commands.set(fn.name, command as string | string[]);
    }
    return tool;
  });
  for (const { function: fn } of wire as { function: Body }[]) {
    const problem = fn.parameters === undefined ? undefined : await parametersProblem(fn.parameters);
    if (problem) throw usage(`--tools: the parameters of ${fn.name as string} ${problem}`);
  }
  return { wire, commands };
}

/** The first MAX_RESULT_BYTES of a stream, and (when there was more) a line that tells the model it sees only part of it. */
function keptOutput(name: string) {
  const kept: Buffer[] = [];
  const o = {
    size: 0,
    keep: (b: Buffer) => {
      const room = MAX_RESULT_BYTES - o.size;
      o.size += b.length;
      if (room > 0) kept.push(room < b.length ? b.subarray(0, room) : b);
    },
    text: () => Buffer.concat(kept).toString('utf8') + (o.size > MAX_RESULT_BYTES ? `\n[router: the ${name} was cut at ${MAX_RESULT_BYTES / 1024 / 1024} MiB of ${o.size} bytes]` : ''),
  };
  return o;
}

/**
 * The result of one run: its stdout, or (on failure) its exit code and stderr, which go back to the
 * model as they are. The command runs in a process group of its own, so that Ctrl-C ends all of it
 * (what a shell line started too, not only the shell); the abort is then thrown.
 */
export async function runCommand(command: string | string[], input: string, signal: AbortSignal): Promise<{ code: number; output: string }> {
  signal.throwIfAborted();
  // Loaded only when a tool runs: a one-shot chat never loads child processes.
  const { spawn } = await import('node:child_process');
  const [file, args] = typeof command === 'string' ? ['/bin/sh', ['-c', command]] : [command[0]!, command.slice(1)];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    // Each stream has a room of its own: what a tool logs on stderr never takes the place of its result.
    const out = keptOutput('output');
    const err = keptOutput('stderr');
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        /* the group has ended */
      }
    };
    const groupAlive = () => {
      try {
        return !!child.pid && process.kill(-child.pid, 0);
      } catch {
        return false;
      }
    };
    const stop = () => {
      killGroup('SIGTERM');
      // One that ignores SIGTERM is killed after 2 s. The abort is thrown once the group is gone:
      // router exits soon after it, and must not leave a tool running.
      const since = Date.now();
      const check = setInterval(() => {
        const alive = groupAlive();
        if (alive && Date.now() - since < 2000) return;
        if (alive) killGroup('SIGKILL');
        clearInterval(check);
        reject(signal.reason);
      }, 20);
    };
    signal.addEventListener('abort', stop, { once: true });
    // Router ended otherwise (a plain kill: timeout(1)), the tool is told to end too; it is in a session of its own.
    const onExit = () => killGroup('SIGTERM');
    process.once('exit', onExit);
    const done = () => {
      signal.removeEventListener('abort', stop);
      process.removeListener('exit', onExit);
      return signal.aborted;
    };
    child.stdout.on('data', out.keep);
    child.stderr.on('data', err.keep);
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    child.on('error', (e) => done() || resolve({ code: 127, output: `could not run the command: ${e.message}` }));
    // A process the command left running (an opener, a server) may hold its stdout open for ever: the
    // result is what came by a moment after the command exited, and that process is not waited for.
    let leftOpen: NodeJS.Timeout | undefined;
    child.on('exit', () => {
      // After a poll of the pipes (setImmediate): what the command wrote before it exited is read first.
      leftOpen = setTimeout(() => setImmediate(() => [child.stdout, child.stderr].forEach((s) => s.destroy())), 250);
    });
    child.on('close', (code, sig) => {
      clearTimeout(leftOpen);
      if (done()) return;
      if (code === 0) return resolve({ code: 0, output: out.text() });
      const why = sig ? `was stopped by ${sig}` : `exited with code ${code}`;
      resolve({ code: code ?? 1, output: `the command ${why}${err.size ? `; stderr:\n${err.text()}` : ''}${out.size ? `\nstdout:\n${out.text()}` : ''}` });
    });
  });
}

/** A call as a person reads it: the model's name and arguments with control characters escaped, so that they cannot hide what runs. */
const shownCall = (call: ToolCall) => visible(`${call.function.name} ${call.function.arguments}`);

async function approved(io: IO, call: ToolCall): Promise<boolean> {
  const { confirm } = await import('@inquirer/prompts');
  return confirm({ message: `Run ${shownCall(call)}?`, default: true }, io.promptContext);
}

/** The calls as stdout shows them when router does not run them: one JSON line each. */
export function printCalls(io: IO, calls: ToolCall[]): void {
  for (const c of calls) {
    let args: unknown = c.function.arguments;
    try {
      args = JSON.parse(c.function.arguments);
    } catch {
      /* printed as the string that came */
    }
    io.out(`${JSON.stringify({ id: c.id, name: c.function.name, arguments: args })}\n`);
  }
}

/**
 * Calls that router does not run end the command: printed on stdout, one JSON line each (with
 * --json the answer printed holds them), and exit 11, so that a script tells them from an empty answer.
 */
export function callsNotRun(io: IO, calls: ToolCall[], why: string, json: boolean): CliError {
  if (!json) printCalls(io, calls);
  return new CliError(`the model asked for ${calls.length === 1 ? 'a tool call' : `${calls.length} tool calls`} that ${calls.length === 1 ? 'was' : 'were'} not run (${why})`, EXIT.TOOL_CALLS);
}

export interface ToolLoop {
  tools: LocalTools;
  maxRounds: number;
  approve: boolean;
  json: boolean;
  signal: AbortSignal;
}

/**
 * Runs the model's calls and asks again with their results until it answers in text. A call of a
 * tool without a command, or one more round than allowed, ends with the calls printed and exit 11.
 */
export async function toolLoop<A extends { message: AssembledMessage }>(io: IO, loop: ToolLoop, messages: ChatMessage[], first: A, ask: (messages: ChatMessage[]) => Promise<A>): Promise<A> {
  let answer = first;
  for (let round = 1; answer.message.tool_calls?.length; round++) {
    const calls = answer.message.tool_calls.map(({ index: _index, ...c }) => c);
    const missing = calls.find((c) => !loop.tools.commands.has(c.function.name));
    if (missing || round > loop.maxRounds) throw callsNotRun(io, calls, missing ? `${missing.function.name} has no "command" in --tools` : `--max-tool-rounds ${loop.maxRounds} reached`, loop.json);
    messages.push({ role: 'assistant', content: answer.message.content, tool_calls: calls });
    for (const call of calls) {
      let result: { code: number; output: string };
      if (loop.approve && !(await approved(io, call))) result = { code: -1, output: 'the user declined to run this tool' };
      else result = await runCommand(loop.tools.commands.get(call.function.name)!, call.function.arguments, loop.signal);
      io.info(`tool ${shownCall(call)} -> ${result.code === -1 ? 'declined' : `exit ${result.code}`}`);
      messages.push({ role: 'tool', tool_call_id: call.id, content: result.output });
    }
    answer = await ask(messages);
  }
  return answer;
}
