/**
 * What the tool loop runs: a tool is a name, its parameters (a JSON schema) and `run(args, signal)`.
 * Sources: local commands (`command-tool.ts`), MCP servers (`mcp.ts`), functions in code.
 */

import { untilAborted } from '../internal/abort-fanout.js';
import { KitError } from './errors.js';
import { argumentsCheck } from './schema.js';
import type { ToolArguments } from './schema-type.js';

/** An image a tool answered with (base64), passed on to the model where the API takes it. */
export interface ToolImage {
  mimeType: string;
  data: string;
}

export interface ToolResult {
  /** What goes back to the model as the tool's answer. */
  text: string;
  /** False when the tool failed; the text then says how (the model reads it). */
  ok: boolean;
  /** A command's exit code (127: not found; 126: not runnable), when the tool is a command. */
  code?: number | undefined;
  /** Why a command could not be run, when router can tell: "FILE is a folder, not a program" (exit 126), where the project installed it (127). */
  notRunnable?: string | undefined;
  /** What was cut before it went to the model (a command's streams, an MCP result): the bytes kept of those that came. */
  outputCut?: { stream: 'output' | 'stderr' | 'result'; kept: number; size: number }[] | undefined;
  /** A command's streams that were binary, not text: the model was sent a line naming them instead. */
  binary?: { stream: 'output' | 'stderr'; size: number }[] | undefined;
  /** What a command that succeeded logged on stderr: for the person watching, never the model. */
  log?: string | undefined;
  images?: ToolImage[] | undefined;
}

export interface ToolCallInfo {
  /** The arguments as the model wrote them (a command reads them on stdin as they came). */
  arguments: string;
  /** The bound of this call, when it has one: its signal ends with a TimeoutError after this long. */
  timeoutMs?: number | undefined;
  /** What set that bound, as a message names it (the CLI: `--tool-timeout`, or `--timeout` when it stood in). */
  timeoutName?: string | undefined;
  /** Values the tool's environment must not hold: the keys of the client the loop runs with. */
  secrets?: string[] | undefined;
  /** Told how a long call goes, where the tool says so (an MCP server's progress, a task's status). */
  progress?: ((update: ToolProgress) => void) | undefined;
}

/** How far a call has come: `progress` of `total` (when known), and the tool's own words. */
export interface ToolProgress {
  progress?: number | undefined;
  total?: number | undefined;
  message?: string | undefined;
}

export interface Tool {
  name: string;
  description?: string | undefined;
  parameters?: Record<string, unknown> | undefined;
  /** Where it comes from, as a person reads it: `command`, `mcp NAME`, `code`. */
  source?: string | undefined;
  run(args: Record<string, unknown>, signal: AbortSignal, call?: ToolCallInfo): Promise<ToolResult | string>;
}

/** What went wrong with a source of tools (not with one call): the loop cannot go on. `start`: did not start or list its tools; `ended`: ended during a call; `hung`: no answer in time; `invalid`: a tools file or name clash. */
export class ToolSourceError extends KitError<'start' | 'ended' | 'hung' | 'invalid'> {
  /** The code, by the name it had first. */
  get kind(): ToolSourceError['code'] {
    return this.code;
  }
}

/**
 * A tool from a function in code. Its parameters written as a literal (a JSON schema) type the function's
 * arguments: `functionTool('add', { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] }, ({ a }) => a + 1)`.
 */
export function functionTool<const S extends Record<string, unknown>>(name: string, parameters: S, fn: (args: ToolArguments<S>, signal: AbortSignal) => Promise<unknown> | unknown, description?: string): Tool {
  const problem = argumentsCheck(parameters);
  return {
    name,
    parameters,
    description,
    source: 'code',
    run: async (args, signal) => {
      // The function's arguments are typed by its parameters: arguments that break them go back to the model, which may try again.
      const broken = await problem(args);
      if (broken) return { ok: false, text: `the arguments do not follow the parameters of ${name}: ${broken}` };
      // Bounded by the call's timeout and the caller's abort though the function never looks at its signal.
      const value = await untilAborted(new Promise((settle) => settle(fn(args as ToolArguments<S>, signal))), signal);
      return typeof value === 'string' ? value : JSON.stringify(value);
    },
  };
}
