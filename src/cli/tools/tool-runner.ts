/**
 * `--tools FILE` and `--mcp` of chat, chat -i and responses: function tools, some with a local
 * `command` that router runs when the model calls them, and the tools of MCP servers (src/kit).
 */
import type { ToolDeclaration, ToolSet } from '../../kit/toolset.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import { readJsonFile } from '../io/input.js';
import { parametersProblem } from '../../kit/schema.js';
import type { IO } from '../io/io.js';
import { visible } from '../../internal/visible.js';
import { ask } from '../io/ask.js';
import { sourceName, type Settings } from '../../config/settings.js';
import { KEY_ENV } from '../../config/fields.js';
import { hideFromEnviron } from '../../internal/hide-from-environ.js';
import type { McpClientAnswers } from '../../kit/mcp-client-requests.js';
import { serversFileProgram } from '../../kit/mcp-config-file.js';
import { API_TOOL_NAME, API_TOOL_NAME_RULE } from '../../kit/tool-name.js';

type Body = Record<string, unknown>;

export interface LocalTools {
  /** Function tools, each with its command when it has one. */
  functions: { decl: ToolDeclaration; command?: string | string[] }[];
  /** Other tools of the Responses API (web search, …), sent as they are. */
  other: Body[];
}

/** The default of --tool-timeout, in seconds. */
export const DEFAULT_TOOL_TIMEOUT = 300;

const SHAPE = '{"type": "function", "function": {"name", "description", "parameters"}} or {"type": "function", "name", "description", "parameters"}';

/** What a --tools file that is no array of tools holds instead (one tool, a schema, another program's MCP servers), and where it goes. */
async function heldInstead(value: unknown, path: string): Promise<string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return '';
  const o = value as Body;
  if (o.type === 'function' || (o.function && typeof o.function === 'object')) return ': it holds one tool, not an array of them: put it in [ ]';
  const servers = path === '-' ? undefined : await serversFileProgram([path.replace(/^@/, '')]);
  if (servers) return `: ${servers.replace(', not a server', '')}`;
  if (typeof o.type === 'string' || (o.properties && typeof o.properties === 'object') || typeof o.$schema === 'string') {
    return ': it holds a JSON schema, not tools: --schema FILE asks for an answer that follows it; a tool\'s schema goes in its "parameters"';
  }
  return '';
}

/** Reads --tools: an array of function tools in chat's nested or Responses' flat shape, each with an optional "command". */
export async function loadTools(path: string | undefined, io: IO, api: 'chat' | 'responses'): Promise<LocalTools | undefined> {
  if (path === undefined) return undefined;
  const tools = await readJsonFile('--tools', path, io);
  if (!Array.isArray(tools) || tools.length === 0) throw usage(`--tools must hold a JSON array of at least one tool${await heldInstead(tools, path)}`);
  const names = new Set<string>();
  const out: LocalTools = { functions: [], other: [] };
  for (const [i, t] of (tools as Body[]).entries()) {
    if (!t || typeof t !== 'object' || Array.isArray(t)) throw usage(`--tools: tool ${i + 1} is not an object`);
    const { command, ...tool } = t;
    if (api === 'responses' && typeof tool.type !== 'string') throw usage(`--tools: tool ${i + 1} needs a string "type" (e.g. "function")`);
    if (api === 'responses' && tool.type !== 'function') {
      if (command !== undefined) throw usage(`--tools: tool ${i + 1} is a ${String(tool.type)} tool: only function tools have a "command"`);
      out.other.push(tool);
      continue;
    }
    const fn = (tool.function && typeof tool.function === 'object' ? tool.function : tool) as Body;
    if (tool.type !== 'function' || typeof fn.name !== 'string' || !fn.name) throw usage(`--tools: tool ${i + 1} must be ${SHAPE}`);
    // Else sent, and refused by the service (a 400) after the MCP servers started.
    if (!API_TOOL_NAME.test(fn.name)) throw usage(`--tools: tool ${i + 1} is named ${JSON.stringify(fn.name)}: ${API_TOOL_NAME_RULE}`);
    // A call names its tool: two of one name (with a command or not) could not be told apart.
    if (names.has(fn.name)) throw usage(`--tools: two tools are named ${fn.name}`);
    names.add(fn.name);
    if (command !== undefined) {
      const ok = (typeof command === 'string' && command.trim() !== '') || (Array.isArray(command) && command.length > 0 && command.every((a) => typeof a === 'string'));
      if (!ok) throw usage(`--tools: the command of ${fn.name} must be a shell line or an array of arguments`);
    }
    const problem = fn.parameters === undefined ? undefined : await parametersProblem(fn.parameters);
    if (problem) throw usage(`--tools: the parameters of ${fn.name} ${problem}`);
    const decl = { name: fn.name, description: fn.description as string | undefined, parameters: fn.parameters as Body | undefined };
    out.functions.push({ decl, ...(command === undefined ? {} : { command: command as string | string[] }) });
  }
  return out;
}

export interface ToolSources {
  local?: LocalTools;
  mcp?: string[];
  /** The environment router runs with; tools get it without the keys. */
  env: NodeJS.ProcessEnv;
  /** The keys in use: no tool or server sees them, in whatever variable. */
  secrets: (string | undefined)[];
  signal: AbortSignal;
  timeoutSeconds?: number;
  /** Where the MCP servers were set when no --mcp gave them (mcpFrom): a server that fails to start is said with it. */
  mcpFrom?: string;
  /** What the servers may ask of router (roots, sampling, elicitation): ./mcp-answers.ts. */
  answers?: McpClientAnswers;
}

/**
 * The MCP servers of a run: --mcp (or a role's mcp) replaces those of ROUTER_MCP, which replaces the
 * profile's mcp. Chat's --schema takes no tools: the servers of the environment or profile are then left out, and said.
 */
export function mcpServers(io: IO, flag: string[] | undefined, settings: Settings, schema = false): string[] | undefined {
  if (flag?.length || !settings.mcp) return flag;
  if (!schema) return settings.mcp;
  io.note(`note: --schema takes no tools: the MCP servers of ${sourceName(settings.from.mcp!)} are left out`);
  return undefined;
}

/** Where the servers mcpServers gives were set, when a variable or the profile gave them, as a failure to start names it with the way to leave them out. */
export function mcpFrom(flag: string[] | undefined, settings: Settings): string | undefined {
  const from = flag?.length || !settings.mcp ? undefined : settings.from.mcp;
  if (!from) return undefined;
  if (from.kind === 'profile') return `it is in the mcp of profile "${from.name}" (router config unset mcp${from.name === settings.profile ? '' : ` --profile ${from.name}`} leaves it out; --mcp gives servers in its place)`;
  return `it is in ${sourceName(from)} (unset it to leave it out; --mcp gives servers in its place)`;
}

/**
 * A tool's command or an MCP server's line (a command's arguments, a URL) that holds a key router knows is refused before
 * anything starts or is sent: no key of router's goes to a tool or server (docs/keys.md), nor in `ps` to every user here.
 */
function refuseKeysGiven(src: ToolSources, secrets: (string | undefined)[]): void {
  // A key under 8 characters is never hidden (docs/keys.md): it would be found in any text.
  const keys = secrets.filter((k): k is string => typeof k === 'string' && k.length >= 8);
  const holds = (text: string) => keys.some((k) => text.includes(k));
  const why = 'no key of router\'s goes to a tool or an MCP server: give it a key of its own (router keys create NAME --limit 5) in a variable of yours it reads';
  for (const f of src.local?.functions ?? []) {
    if (f.command !== undefined && holds([f.command].flat().join(' '))) throw usage(`the command of tool ${visible(f.decl.name)} holds a key router knows (****): ${why}`);
  }
  for (const line of src.mcp ?? []) {
    if (holds(line)) throw usage(`the command line or URL of an MCP server holds a key router knows (****): ${why}${src.mcpFrom ? `; ${src.mcpFrom}` : ''}`);
  }
}

/** Starts the MCP servers and makes the local tools runnable; undefined when there are no function tools. */
export async function openTools(src: ToolSources): Promise<ToolSet | undefined> {
  if (!src.local?.functions.length && !src.mcp?.length) return undefined;
  const [{ ToolSet }, { commandTool }, { toolEnv }] = await Promise.all([import('../../kit/toolset.js'), import('../../kit/command-tool.js'), import('../../kit/tool-env.js')]);
  // Not only the keys sent: a variable holding any key router knows (another profile's, one kept in the keychain) goes too.
  const [{ knownKeys }, { markedKeysIn }] = await Promise.all([import('../../config/known-keys.js'), import('../../internal/key-marks.js')]);
  const known = knownKeys(src.env);
  const secrets = [...src.secrets, ...known.keys, ...Object.values(src.env).flatMap((v) => (v ? markedKeysIn(v, known.marks) : []))];
  refuseKeysGiven(src, secrets);
  const env = toolEnv(src.env, secrets);
  // A tool runs as this user: it could read the keys from this process's /proc/PID/environ, unless hidden there.
  hideFromEnviron([...secrets, ...Object.values(KEY_ENV).map((name) => src.env[name])]);
  const fns = src.local?.functions ?? [];
  const open = ToolSet.open({
    declared: fns.filter((f) => f.command === undefined).map((f) => f.decl),
    tools: fns.filter((f) => f.command !== undefined).map((f) => commandTool(f.decl, f.command!, env)),
    mcp: src.mcp,
    env,
    // A server may take a while to start (npx fetching it, a loaded machine): 30 s, or a longer --tool-timeout.
    startTimeoutMs: Math.max(30, src.timeoutSeconds ?? 0) * 1000,
    signal: src.signal,
    ...(src.mcp?.length ? src.answers : {}),
  });
  const { ToolSourceError } = await import('../../kit/tool.js');
  return open.catch((err: unknown) => {
    throw err instanceof ToolSourceError && err.kind === 'start' && src.mcpFrom ? new ToolSourceError(`${err.message}; ${src.mcpFrom}`, err.kind) : err;
  });
}

export interface ShownCall {
  id: string;
  name: string;
  arguments: string;
}

/** A call as a person reads it: the model's name and arguments with control characters escaped, so that they cannot hide what runs. */
export const shownCall = (call: { name: string; arguments: string }) => visible(`${call.name} ${call.arguments}`);

/** --approve's question; `signal` (chat -i: the turn's) ends it, else Ctrl-C's. */
export async function approved(io: IO, call: { name: string; arguments: string }, signal?: AbortSignal): Promise<boolean> {
  const { confirm } = await import('@inquirer/prompts');
  return ask(io, confirm, { message: `Run ${shownCall(call)}?`, default: true }, signal ?? io.interrupt);
}

/** The calls as stdout shows them when router does not run them: one JSON line each. */
export function printCalls(io: IO, calls: ShownCall[]): void {
  for (const c of calls) {
    let args: unknown = c.arguments;
    try {
      args = JSON.parse(c.arguments);
    } catch {
      /* printed as the string that came */
    }
    io.out(`${JSON.stringify({ id: c.id, name: c.name, arguments: args })}\n`);
  }
}

/** Chat's tool calls in the shape printCalls takes. */
export const chatCalls = (calls: { id: string; function: { name: string; arguments: string } }[]): ShownCall[] => calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));

/**
 * Calls that router does not run end the command: printed on stdout, one JSON line each (with
 * --json the answer printed holds them), and exit 11, so that a script tells them from an empty answer.
 */
export function callsNotRun(io: IO, calls: ShownCall[], why: string, json: boolean): CliError {
  if (!json) printCalls(io, calls);
  return new CliError(`the model asked for ${calls.length === 1 ? 'a tool call' : `${calls.length} tool calls`} that ${calls.length === 1 ? 'was' : 'were'} not run (${why})`, EXIT.TOOL_CALLS);
}

/** Whether `model` takes image input, by the service's model list (kept briefly); false when unknown. */
export function imageInput(client: import('../../client/index.js').RouterClient, env: NodeJS.ProcessEnv, apiRoot: string | undefined, model: string | undefined, signal: AbortSignal): () => Promise<boolean> {
  return async () => {
    const [{ modelCatalog }, { DEFAULT_API_ROOT }] = await Promise.all([import('../service/model-catalog.js'), import('../../client/core.js')]);
    const models = await modelCatalog(client, { env, apiRoot: apiRoot ?? DEFAULT_API_ROOT, signal });
    const arch = models.find((m) => m.id === model)?.architecture as { input_modalities?: string[] } | undefined;
    return !!arch?.input_modalities?.includes('image');
  };
}
