/**
 * Runs the model's tool calls: each bounded by a per-call timeout, and all results of one loop
 * together bounded (250 results of 1 MiB would make a request past what the service takes).
 */
import { ToolSourceError, type Tool, type ToolProgress, type ToolResult } from './tool.js';
import { childSignal } from '../internal/abort-fanout.js';
import { counted } from '../internal/counted.js';
import { argumentsWithoutKeys } from '../internal/arguments-without-keys.js';
import { checkCounts, checkTimeout } from './checked-options.js';

export interface ToolCallRequest {
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text). */
  arguments: string;
}

export interface CallOutcome extends ToolResult {
  /** `declined`: the approver said no; `timeout`: stopped after the per-call timeout; `missing`: no such tool. */
  status: 'ok' | 'failed' | 'declined' | 'timeout' | 'missing';
  /** Set when the text was cut to fit the bound of all results. */
  cut?: boolean | undefined;
  /** Set when the model wrote one of `secrets` into the call's arguments: the tool (and the approver) got `****` in its place. */
  keysHidden?: boolean | undefined;
}

/** The most of all tool results of one loop together, in bytes (the service takes requests of up to 200 MB). */
export const DEFAULT_RESULTS_BYTES = 64 * 1024 * 1024;

/** What is left of the bound of all results; each result takes its part, the one that passes it is cut. */
export class ResultBudget {
  used = 0;
  constructor(readonly limit = DEFAULT_RESULTS_BYTES) {
    checkCounts('new ResultBudget()', { bytes: limit }, ['bytes'], 1);
  }
  take(text: string): { text: string; cut: boolean } {
    const size = Buffer.byteLength(text);
    const room = Math.max(0, this.limit - this.used);
    if (size <= room) {
      this.used += size;
      return { text, cut: false };
    }
    const kept = Buffer.from(text).subarray(0, room).toString('utf8').replace(/\uFFFD$/, '');
    this.used = this.limit;
    return { text: `${kept}\n[router: cut: the tool results of this chat reached ${this.limit / 1024 / 1024} MiB together, ${size} bytes came]`, cut: true };
  }
}

export interface CallOptions {
  signal: AbortSignal;
  /** Each call ends after this long (its processes stopped); undefined: no bound of its own. */
  timeoutMs?: number | undefined;
  /** What set timeoutMs, as messages name it (passed to the tool with the bound). */
  timeoutName?: string | undefined;
  budget: ResultBudget;
  /** Asked before each call; false sends "declined" to the model instead of running the tool. */
  approve?: ((call: ToolCallRequest) => Promise<boolean>) | undefined;
  /** Values no tool's environment may hold (the client's keys), passed to each tool with its call; hidden in its arguments too. */
  secrets?: string[] | undefined;
  /** Told how a long call goes, where its tool says so. */
  progress?: ((call: ToolCallRequest, update: ToolProgress) => void) | undefined;
}

function parsedArguments(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Runs one call. Ctrl-C (the signal) and a source's failure (ToolSourceError) are thrown; a tool's own failure is a result.
 * A key of `secrets` the model wrote into the arguments (one it read in the prompt) is hidden before anyone sees them.
 */
export async function runToolCall(tools: Map<string, Tool>, asked: ToolCallRequest, opts: CallOptions): Promise<CallOutcome> {
  checkTimeout('runToolCall()', opts, 'timeoutMs');
  const hidden = argumentsWithoutKeys(asked.arguments, opts.secrets ?? []);
  if (hidden === undefined) return runCall(tools, asked, opts);
  return { ...(await runCall(tools, { ...asked, arguments: hidden }, opts)), keysHidden: true };
}

async function runCall(tools: Map<string, Tool>, call: ToolCallRequest, opts: CallOptions): Promise<CallOutcome> {
  const tool = tools.get(call.name);
  if (!tool) return { status: 'missing', ok: false, text: `there is no tool named ${call.name}` };
  if (opts.approve && !(await opts.approve(call))) return { status: 'declined', ok: false, text: 'the user declined to run this tool' };
  // The call's own signal: the caller's may be shared by many calls at once.
  const own = childSignal(opts.signal, opts.timeoutMs);
  let result: ToolResult;
  try {
    const r = await tool.run(parsedArguments(call.arguments), own.signal, { arguments: call.arguments, ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }), ...(opts.timeoutName === undefined ? {} : { timeoutName: opts.timeoutName }), ...(opts.secrets?.length ? { secrets: opts.secrets } : {}), ...(opts.progress ? { progress: (u: ToolProgress) => opts.progress!(call, u) } : {}) });
    result = typeof r === 'string' ? { ok: true, text: r } : r;
  } catch (err) {
    if (opts.signal.aborted || err instanceof ToolSourceError) throw err;
    if (own.timedOut()) return { status: 'timeout', ok: false, text: `the tool did not end within ${(opts.timeoutMs ?? 0) / 1000} s and was stopped` };
    result = { ok: false, text: `the tool failed: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    own.done();
  }
  const { text, cut } = opts.budget.take(result.text);
  // Images count as the base64 text they are sent as; those past the bound are left out.
  const images = result.images?.filter((i) => !opts.budget.take(i.data).cut);
  const dropped = (result.images?.length ?? 0) - (images?.length ?? 0);
  return { ...result, text: dropped ? `${text}\n[router: ${counted(dropped, 'image')} left out: past the bound of all tool results]` : text, images, cut: cut || dropped > 0, status: result.ok ? 'ok' : 'failed' };
}
