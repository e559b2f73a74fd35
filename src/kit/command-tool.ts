/**
 * A tool that is a local command (a shell line, or an argv array): it reads the model's arguments on
 * stdin, and its stdout is the result. It runs in a process group of its own, with an environment
 * without router's keys; an abort (Ctrl-C, the per-call timeout) ends the whole group.
 */
import { ToolSourceError, type Tool, type ToolResult } from './tool.js';
import { atExit } from '../internal/exit-hooks.js';
import { whenAborted } from '../internal/abort-fanout.js';
import { toolEnv } from './tool-env.js';
import { counted } from '../internal/counted.js';

/** The most of one stream of a command's output sent back to the model. */
export const MAX_RESULT_BYTES = 1024 * 1024;

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
    /** Bytes that are not UTF-8 text (an image, a compressed file): named in one line, not sent as mangled text. */
    binary: () => !isText(Buffer.concat(kept)),
    text: () => {
      if (o.binary()) return `[router: the ${name} is ${counted(o.size, 'byte')} of binary data, not UTF-8 text: not sent]`;
      return Buffer.concat(kept).toString('utf8') + (o.size > MAX_RESULT_BYTES ? `\n[router: the ${name} was cut at ${MAX_RESULT_BYTES / 1024 / 1024} MiB of ${o.size} bytes]` : '');
    },
  };
  return o;
}

/** Valid UTF-8 without NUL bytes; a character split where the output was cut still counts as text. */
function isText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

export interface CommandRun {
  code: number;
  output: string;
  /** The streams sent back that were cut at MAX_RESULT_BYTES: the bytes kept of those the command wrote. */
  outputCut?: { stream: 'output' | 'stderr'; kept: number; size: number }[] | undefined;
  /** The streams sent back that were binary, not text: the model got a line naming them instead. */
  binary?: { stream: 'output' | 'stderr'; size: number }[] | undefined;
  /** What a command that succeeded wrote on stderr (its log, not sent to the model), when it wrote text there. */
  log?: string | undefined;
}

/** A command that could not start, with a shell's code: 126 found but not runnable (no execute bit), 127 not found. */
function notStarted(file: string, e: NodeJS.ErrnoException): CommandRun {
  const code = e.code === 'EACCES' || e.code === 'ENOEXEC' ? 126 : 127;
  return { code, output: `could not run the command: ${e.message}${code === 126 ? ` (${file} is not executable)` : ''}` };
}

/**
 * The result of one run: its stdout, or (on failure) its exit code and stderr, which go back to the
 * model as they are. On abort the group gets SIGTERM, and SIGKILL 2 s later if it still runs; the
 * abort's reason is thrown once the group is gone.
 */
export async function runCommand(command: string | string[], input: string, signal: AbortSignal, env: Record<string, string> = toolEnv(process.env)): Promise<CommandRun> {
  signal.throwIfAborted();
  // Loaded only when a tool runs: a one-shot chat never loads child processes.
  const [{ spawn }, { endGroup, signalGroup }] = await Promise.all([import('node:child_process'), import('../internal/process-group.js')]);
  // Aborted while it loaded (no listener yet to hear it): never spawned, else never settled.
  signal.throwIfAborted();
  const [file, args] = typeof command === 'string' ? ['/bin/sh', ['-c', command]] : [command[0]!, command.slice(1)];
  return new Promise((resolve, reject) => {
    // Whatever env is given: never router's key variables nor a key this process's clients send.
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: toolEnv(env) });
    // Each stream has a room of its own: what a tool logs on stderr never takes the place of its result.
    const out = keptOutput('output');
    const err = keptOutput('stderr');
    const stop = () => void endGroup(child.pid).then(() => reject(signal.reason));
    // One listener on a signal shared by many calls at once (tool.run called directly; node warns at eleven).
    const unheard = whenAborted(signal, stop);
    // Router ended otherwise (a plain kill: timeout(1)), the tool is told to end too; it is in a session of its own.
    const forget = atExit(() => signalGroup(child.pid, 'SIGTERM'));
    const done = () => {
      unheard();
      forget();
      return signal.aborted;
    };
    child.stdout.on('data', out.keep);
    child.stderr.on('data', err.keep);
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    child.on('error', (e) => done() || resolve(notStarted(file, e)));
    // A process the command left running (an opener, a server) may hold its stdout open for ever: the
    // result is what came by a moment after the command exited, and that process is not waited for.
    let leftOpen: NodeJS.Timeout | undefined;
    child.on('exit', () => {
      leftOpen = setTimeout(() => setImmediate(() => [child.stdout, child.stderr].forEach((s) => s.destroy())), 250);
    });
    child.on('close', (code, sig) => {
      clearTimeout(leftOpen);
      if (done()) return;
      const sent = code === 0 ? [['output', out] as const] : [['stderr', err] as const, ['output', out] as const];
      const binary = sent.filter(([, s]) => s.size && s.binary()).map(([stream, s]) => ({ stream, size: s.size }));
      const outputCut = sent.filter(([, s]) => s.size > MAX_RESULT_BYTES && !s.binary()).map(([stream, s]) => ({ stream, kept: MAX_RESULT_BYTES, size: s.size }));
      const cut = { ...(outputCut.length ? { outputCut } : {}), ...(binary.length ? { binary } : {}) };
      if (code === 0) return resolve({ code: 0, output: out.text(), ...cut, ...(err.size && !err.binary() ? { log: err.text() } : {}) });
      const why = sig ? `was stopped by ${sig}` : `exited with code ${code}`;
      resolve({ code: code ?? 1, output: `the command ${why}${err.size ? `; stderr:\n${err.text()}` : ''}${out.size ? `\nstdout:\n${out.text()}` : ''}`, ...cut });
    });
  });
}

/** A command (its first word, for a shell line) not found that the project installed: where it is. */
async function notOnPath(command: string | string[]): Promise<string | undefined> {
  const program = typeof command === 'string' ? /^\s*([\w.@+-]+)(\s|$)/.exec(command)?.[1] : command[0];
  const { installedHere, projectBin } = await import('./project-bin.js');
  const bin = await projectBin(program);
  return bin && installedHere(bin);
}

/**
 * A command's program that is a folder (EACCES from spawn, or the shell's "Permission denied", exit
 * 126 both): said as such. The program of a shell line is its first word, when that is a plain path.
 */
export async function folderProgram(command: string | string[]): Promise<string | undefined> {
  const program = typeof command === 'string' ? /^\s*([^\s'"`$\\;&|<>()*?]*\/[^\s'"`$\\;&|<>()*?]*)(\s|$)/.exec(command)?.[1] : command[0];
  if (!program) return undefined;
  const { stat } = await import('node:fs/promises');
  const isFolder = await stat(program).then((s) => s.isDirectory(), () => false);
  return isFolder ? `${program} is a folder, not a program` : undefined;
}

/**
 * A tool whose calls run `command`, with `env` (use `toolEnv()`: without router's keys). Without one,
 * this process's environment without the key variables: never all of it, keys and all. Whatever
 * `env` is, any variable holding a key a client of this process sends is left out (runCommand).
 */
export function commandTool(def: { name: string; description?: string | undefined; parameters?: Record<string, unknown> | undefined }, command: string | string[], env: Record<string, string> = toolEnv(process.env)): Tool {
  // Else it ran at the model's call and failed there ("The \"file\" argument must be of type string"), or ran nothing.
  const runnable = typeof command === 'string' ? command.trim() !== '' : Array.isArray(command) && command.length > 0 && command.every((a) => typeof a === 'string') && command[0] !== '';
  if (!runnable) throw new ToolSourceError(`commandTool() ${typeof def?.name === 'string' ? def.name : ''}: its command must be a shell line or an array of arguments, the program first`, 'invalid');
  return {
    ...def,
    source: 'command',
    run: async (args, signal, call): Promise<ToolResult> => {
      // The loop's client keys too, whatever variable a program read them from.
      const callEnv = call?.secrets?.length ? toolEnv(env, call.secrets) : env;
      const { code, output, outputCut, binary, log } = await runCommand(command, call?.arguments ?? JSON.stringify(args), signal, callEnv);
      const notRunnable = code === 126 ? await folderProgram(command) : code === 127 ? await notOnPath(command) : undefined;
      const text = notRunnable ? `could not run the command: ${notRunnable}` : output;
      return { ok: code === 0, code, text, ...(notRunnable ? { notRunnable } : {}), ...(outputCut ? { outputCut } : {}), ...(binary ? { binary } : {}), ...(log ? { log } : {}) };
    },
  };
}
