/**
 * The tools of one chat: local ones (commands, functions) and those of MCP servers, by the name the
 * model calls. A name that two sources share is prefixed by its server's (`everything_echo`).
 */
import { connectMcp, type McpServer } from './mcp.js';
import { ToolSourceError, type Tool } from './tool.js';
import type { McpClientAnswers } from './mcp-client-requests.js';
import { checkOptions, optionNames } from '../client/option-names.js';
import { API_TOOL_NAME, API_TOOL_NAME_RULE, apiToolName } from './tool-name.js';
import { checkTimeout } from './checked-options.js';
import { shownGiven } from '../internal/shape.js';

/** A tool as the model sees it (a tool declared only, run by the caller, has no `run`). */
export interface ToolDeclaration {
  name: string;
  description?: string | undefined;
  parameters?: Record<string, unknown> | undefined;
}

/** `roots`, `sample` and `elicit`: what the MCP servers may ask of the caller (each offered only when given). */
/** The names of ToolSetOptions's members, checked against it both ways (a new option is a name here too). */
const TOOLSET_OPTIONS = optionNames<ToolSetOptions>()({ declared: 1, tools: 1, mcp: 1, env: 1, startTimeoutMs: 1, signal: 1, roots: 1, sample: 1, elicit: 1, onPlainHttp: 1 });

export interface ToolSetOptions extends McpClientAnswers {
  /** Tools the model may call that router does not run (the caller does: exit 11 in the CLI). */
  declared?: ToolDeclaration[] | undefined;
  tools?: Tool[] | undefined;
  /** MCP servers: command lines or http(s) URLs. */
  mcp?: string[] | undefined;
  /** The environment of stdio servers (use `toolEnv()`). */
  env?: Record<string, string> | undefined;
  startTimeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * From JavaScript, where no compiler says so: each list an array (a string's letters were taken as servers), each tool one
 * the kit made (else "tool.run is not a function" at its first call), each name one the API takes and given once (else
 * the service's 400, or a call that names either of two).
 */
function checkShape(opts: ToolSetOptions): void {
  const invalid = (why: string) => new ToolSourceError(`ToolSet.open() ${why}`, 'invalid');
  for (const key of ['tools', 'declared', 'mcp', 'roots'] as const) {
    const v: unknown = opts[key];
    if (v !== undefined && !Array.isArray(v)) throw invalid(`${key} must be an array, not ${shownGiven(v)}${key === 'mcp' ? ": mcp: ['mcp-server-everything stdio']" : ''}`);
  }
  checkTimeout('ToolSet.open()', opts, 'startTimeoutMs');
  for (const [i, spec] of (opts.mcp ?? []).entries()) if (typeof spec !== 'string') throw invalid(`mcp[${i}] must be a command line or an http(s) URL, not ${shownGiven(spec)}`);
  for (const [i, t] of (opts.tools ?? []).entries()) {
    if (typeof t?.name !== 'string' || typeof t.run !== 'function') throw invalid(`tools[${i}]${typeof t?.name === 'string' ? ` (${t.name})` : ''} is no tool: make it with functionTool() or commandTool(), or give it as declared (ToolSet.open({ declared })) for the caller to run`);
  }
  const names = new Set<string>();
  for (const t of [...(opts.tools ?? []), ...(opts.declared ?? [])]) {
    const name: unknown = t?.name;
    if (typeof name !== 'string' || !API_TOOL_NAME.test(name)) throw invalid(`tool name ${shownGiven(name)}: ${API_TOOL_NAME_RULE}`);
    if (names.has(name)) throw invalid(`two tools are named ${name}: a call names its tool, and could not tell them apart`);
    names.add(name);
  }
}

export class ToolSet {
  /** Runnable tools by the name the model calls. */
  readonly tools = new Map<string, Tool>();
  readonly declared: ToolDeclaration[];
  readonly servers: McpServer[] = [];

  private constructor(declared: ToolDeclaration[]) {
    this.declared = declared;
  }

  static async open(opts: ToolSetOptions): Promise<ToolSet> {
    checkOptions('ToolSet.open()', opts, TOOLSET_OPTIONS);
    checkShape(opts);
    const set = new ToolSet(opts.declared ?? []);
    try {
      for (const spec of opts.mcp ?? []) set.servers.push(await connectMcp(spec, { env: opts.env ?? {}, startTimeoutMs: opts.startTimeoutMs, signal: opts.signal, roots: opts.roots, sample: opts.sample, elicit: opts.elicit, onPlainHttp: opts.onPlainHttp }));
    } catch (err) {
      await set.close();
      throw err;
    }
    const local = [...(opts.tools ?? []), ...set.declared.map((d) => ({ name: d.name }))];
    const fromServers = set.servers.flatMap((s) => s.tools.map((t) => ({ server: s.name, tool: t })));
    const count = new Map<string, number>();
    for (const n of [...local.map((t) => t.name), ...fromServers.map((f) => apiToolName(f.tool.name))]) count.set(n, (count.get(n) ?? 0) + 1);
    for (const t of opts.tools ?? []) set.tools.set(t.name, t);
    for (const { server, tool } of fromServers) {
      let name = apiToolName(tool.name);
      if ((count.get(name) ?? 0) > 1) name = apiToolName(`${server}_${tool.name}`);
      for (let i = 2; set.tools.has(name) || set.declared.some((d) => d.name === name); i++) name = apiToolName(`${server}${i}_${tool.name}`);
      set.tools.set(name, { ...tool, name });
    }
    if (!set.tools.size && !set.declared.length) {
      await set.close();
      throw new ToolSourceError('the MCP servers given offer no tools', 'start');
    }
    return set;
  }

  private all(): ToolDeclaration[] {
    return [...[...this.tools.values()].map(({ name, description, parameters }) => ({ name, description, parameters })), ...this.declared];
  }

  /** Chat Completions' form: `{type: function, function: {name, description, parameters}}`. */
  chatTools(): Record<string, unknown>[] {
    return this.all().map((t) => ({ type: 'function', function: withoutUndefined(t) }));
  }

  /** The Responses API's form: `{type: function, name, description, parameters}`. */
  responsesTools(): Record<string, unknown>[] {
    return this.all().map((t) => ({ type: 'function', ...withoutUndefined(t) }));
  }

  /** Ends every server (and its processes). */
  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.close()));
  }
}

function withoutUndefined(t: ToolDeclaration): Record<string, unknown> {
  return Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined));
}
