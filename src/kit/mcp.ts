/**
 * Tools from an MCP server, through the official SDK: a command line (stdio; the server starts with
 * an environment without router's keys) or an http(s) URL (Streamable HTTP, else the older HTTP+SSE). A server that does not
 * start, ends during a call or does not answer in time is a ToolSourceError; close() ends its process.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolSourceError, type Tool, type ToolResult } from './tool.js';
import { splitCommandLine } from './command-line.js';
import { folderProgram } from './command-tool.js';
import type { GroupStdioTransport } from './mcp-stdio.js';
import { answerServerRequests, clientCapabilities, type McpClientAnswers } from './mcp-client-requests.js';
import { firstWords } from '../internal/first-words.js';
import { firstWholeWords, lastWords } from '../internal/key-safe-cut.js';
import { hideable, hideSecrets } from '../internal/hide-secrets.js';
import { credentialsInUse } from '../client/credentials.js';
import { sentInTheClear } from '../internal/api-root.js';
import { isSecretHeader } from '../internal/secret-headers.js';
import { checkOptions, optionNames } from '../client/option-names.js';

/** The names of McpOptions's members, checked against it both ways (a new option is a name here too). */
const MCP_OPTIONS = optionNames<McpOptions>()({ env: 1, startTimeoutMs: 1, signal: 1, roots: 1, sample: 1, elicit: 1, onPlainHttp: 1 });

export interface McpOptions extends McpClientAnswers {
  /** The environment of a stdio server (use `toolEnv()`). */
  env: Record<string, string>;
  /** How long the server may take to start and list its tools (default 30 s). */
  startTimeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface McpServer {
  /** The server's name as it gives it (else the command's or the URL's host). */
  name: string;
  spec: string;
  tools: Tool[];
  close(): Promise<void>;
}

const isUrl = (spec: string) => /^https?:\/\//i.test(spec);
/** setTimeout's largest delay: the SDK's own 60 s bound of a request is not the one router keeps. */
const NO_BOUND = 2 ** 31 - 1;

/** Lines that say nothing of why: a stack frame, node's version after a crash, a brace of an error's fields. */
const NOISE = /^(at\s|Node\.js v\d|[{}[\]^]+$)/;
const TELLS = /error|exception|panic|fatal|cannot|can't|could not|not found|denied|failed|no such/i;

/**
 * The line of a server's stderr that says why it ended: the last that reads as an error (node ends
 * a crash with a stack and its version, which say nothing), else the last that is not noise.
 */
export function tellingLine(stderr: string): string | undefined {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l && !NOISE.test(l));
  return [...lines].reverse().find((l) => TELLS.test(l)) ?? lines.at(-1);
}

/**
 * A server as its failures name it: a URL without its user, password and query (where a token often
 * goes), so that an error pasted into a report gives none away; a command line as it is.
 */
export function shownSpec(spec: string): string {
  if (!isUrl(spec)) return spec;
  try {
    const u = new URL(spec);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return spec.replace(/^(https?:\/\/).*@/is, '$1***@').replace(/\?.*$/s, '?…');
  }
}

/** A server's URL without a user and password (fetch refuses a URL holding them): they go as Basic authorization. */
function httpTarget(spec: string): { url: URL; requestInit?: RequestInit } {
  const url = new URL(spec);
  if (!url.username && !url.password) return { url };
  const basic = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
  url.username = url.password = '';
  return { url, requestInit: { headers: { authorization: `Basic ${basic}` } } };
}

/**
 * The secrets a server's URL holds: its password (and the Basic credential sent for it), its query's values and its
 * fragment, as typed and decoded; what the server says back (an error that echoes the request) shows them as `****`.
 */
function urlSecrets(spec: string): string[] {
  const url = new URL(spec);
  const raw = [url.password, ...url.search.slice(1).split('&').map((p) => p.slice(p.indexOf('=') + 1)), url.hash.slice(1)];
  const basic = httpTarget(spec).requestInit?.headers as Record<string, string> | undefined;
  const found = [...raw, ...raw.map((v) => decodeURIComponent(v.replaceAll('+', ' '))), url.password ? basic?.authorization?.slice('Basic '.length) : undefined];
  return [...new Set(found.filter(hideable))];
}

/** An error as one line: fetch's "fetch failed" says why in its cause. */
function describe(err: unknown): string {
  const e = err as { message?: string; code?: unknown; cause?: { code?: string; message?: string } };
  if (e?.code === 'ENOENT') return 'the command was not found (install it, or give its full path)';
  // As a tool's command (exit 126): found, but not a program this user may run.
  if (e?.code === 'EACCES') return 'the command is not executable (chmod +x it, or give its interpreter first: sh FILE)';
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `${e?.message ?? String(err)}${cause ? ` (${cause})` : ''}`;
}

/**
 * Why a server given by URL could not be spoken to, in words: fetch says "fetch failed" (the reason in its
 * cause's code), the SDK "Streamable HTTP error: Error POSTing to endpoint: <the whole body>".
 */
function describeUrl(err: unknown, url: URL, secrets: string[]): string {
  const e = err as { code?: unknown; message?: string; cause?: { code?: string; message?: string } };
  const cause = e?.cause?.code;
  // The fetch standard's blocked ports (1, 9, 25, 6000, …): fetch refuses them before connecting.
  if (e?.cause?.message === 'bad port') return `could not connect: fetch never connects to port ${url.port} (a port the fetch standard blocks)`;
  if (cause === 'ECONNREFUSED') return 'could not connect: nothing listens there (connection refused)';
  if (cause === 'ENOTFOUND' || cause === 'EAI_AGAIN') return 'could not connect: its host name does not resolve';
  if (typeof e?.code === 'number' && e.code >= 400) {
    const said = bodyMessage((e.message ?? '').replace(/^Streamable HTTP error: Error POSTing to endpoint:\s*/, ''), secrets);
    const answered = `answered HTTP ${e.code}${said ? ` (${said})` : ''}`;
    if (e.code === 401 || e.code === 403) return `${answered}: it wants authorization (a user and password in the URL go as Basic)`;
    return `${answered}: no MCP server answers at this URL${url.pathname.endsWith('/mcp') ? '' : ' (its endpoint is often …/mcp, or …/sse)'}`;
  }
  return cause ? `could not connect (${cause})` : describe(err);
}

/** An error body's message: a JSON error's (`{"error": {"message"}}`, `{"error": "…"}`, `{"message"}`), else the text; one line, short. */
function bodyMessage(body: string, secrets: string[]): string {
  let text = body;
  try {
    const j = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof j?.error === 'string' ? j.error : (j?.error?.message ?? j?.message);
    if (typeof m === 'string') text = m;
  } catch {
    /* not JSON: the text itself */
  }
  const words = firstWords(hideSecrets(text, [...credentialsInUse(), ...secrets]), 121);
  return words.length > 120 ? `${firstWholeWords(words, 120)}…` : words;
}

/**
 * A URL's POST answered 4xx, not for authorization (404, 405, 400): the MCP specification's way to a server of the older
 * HTTP+SSE transport (2024-11-05) is then a GET of the same URL, an SSE stream whose first event names where to POST.
 */
function olderTransportMayAnswer(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' && code >= 400 && code < 500 && code !== 401 && code !== 403;
}

/** What a connection runs, loaded at the first: a program that imports the kit and speaks to no server does not load it. */
async function connectSteps() {
  const loaded = [import('./mcp-content.js'), import('./mcp-call.js'), import('./project-bin.js'), import('./mcp-config-file.js'), import('./mcp-data-file.js'), import('./mcp-stdio.js'), import('./mcp-not-mcp.js')] as const;
  const [content, call, bin, configFile, dataFile, stdio, notMcp] = await Promise.all(loaded);
  return { ...content, ...call, ...bin, ...configFile, ...dataFile, ...stdio, ...notMcp };
}

export async function connectMcp(spec: string, opts: McpOptions): Promise<McpServer> {
  checkOptions('connectMcp()', opts, MCP_OPTIONS);
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { mcpResult, callMcpTool, installedHere, projectBin, flagFileProgram, serversFileProgram, dataFileProgram, GroupStdioTransport, notMcp } = await connectSteps();
  const newClient = (): Client => new Client({ name: 'router', version: '1' }, { capabilities: clientCapabilities(opts) });
  let client = newClient();
  let stderr = '';
  let transport: Transport;
  let stdio: GroupStdioTransport | undefined;
  if (isUrl(spec)) {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    let target;
    try {
      target = httpTarget(spec);
    } catch {
      throw new ToolSourceError(`MCP server ${shownSpec(spec)}: not a URL`, 'invalid');
    }
    const inQuery = [...new Set([...target.url.searchParams].filter(([name, value]) => value && (isSecretHeader(name) || name.toLowerCase() === 'sig')).map(([name]) => `?${name}=`))];
    if ((target.requestInit || inQuery.length) && sentInTheClear(target.url)) opts.onPlainHttp?.(inQuery.length ? { host: target.url.host, inUrl: [...(target.requestInit ? ['password'] : []), ...inQuery] } : { host: target.url.host });
    transport = new StreamableHTTPClientTransport(target.url, target.requestInit ? { requestInit: target.requestInit } : undefined);
  } else {
    const argv = splitCommandLine(spec);
    if (!argv.length) throw new ToolSourceError('--mcp: the server command is empty', 'invalid');
    // What the server said last on stderr explains a failed start: whole words, so that no key is cut (key-safe-cut.ts).
    transport = stdio = new GroupStdioTransport({ command: argv[0]!, args: argv.slice(1), env: opts.env, signal: opts.signal, onStderr: (b) => (stderr = lastWords(stderr + b.toString('utf8'), 2000)) });
  }
  let ended = false;
  const said = () => {
    // The keys of this process's clients hidden before the line is cut (a cut leaves a start hiding would not know).
    const line = tellingLine(hideSecrets(stderr, credentialsInUse()));
    const cut = line && line.length > 300 ? `${firstWholeWords(line, 300)}…` : line;
    return cut ? `; it said: ${cut}` : '';
  };
  const startMs = opts.startTimeoutMs ?? 30_000;
  const close = () => client.close().catch(() => {});
  let listed;
  let name = '';
  let step = 'initialize';
  const open = async () => {
    client.onclose = () => (ended = true);
    await answerServerRequests(client, opts, () => name || shownSpec(spec));
    await client.connect(transport, { timeout: startMs, signal: opts.signal });
    step = 'tools/list';
    return client.listTools(undefined, { timeout: startMs, signal: opts.signal });
  };
  try {
    listed = await open();
  } catch (caught) {
    await close();
    if (opts.signal?.aborted) throw opts.signal.reason;
    let err = caught;
    if (isUrl(spec) && olderTransportMayAnswer(err)) {
      const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
      const target = httpTarget(spec);
      [client, ended] = [newClient(), false];
      transport = new SSEClientTransport(target.url, target.requestInit ? { requestInit: target.requestInit } : undefined);
      listed = await open().catch(async (older: unknown) => {
        await close();
        // Neither transport answered: what the POST was answered says why (a GET's 405 would hide a 404), unless the GET timed out.
        if (/timed out|timeout/i.test(String(older))) err = older;
        return undefined;
      });
      if (opts.signal?.aborted) throw opts.signal.reason;
    }
    if (!listed) {
      // EACCES is also a folder's (no chmod runs that): said so.
      // Another program's file of servers (mcp.json), a --tools or a --schema file, execute bit or not: no shell's words about it.
      const serversFile = isUrl(spec) ? undefined : (await serversFileProgram(splitCommandLine(spec))) ?? (await flagFileProgram(splitCommandLine(spec))) ?? (await dataFileProgram(splitCommandLine(spec), (err as { code?: unknown }).code));
      if (serversFile) throw new ToolSourceError(`MCP server ${shownSpec(spec)}: could not start: ${serversFile}`, 'start');
      const code = (err as { code?: unknown }).code;
      const folder = code === 'EACCES' && !isUrl(spec) ? await folderProgram(splitCommandLine(spec)) : undefined;
      const bin = code === 'ENOENT' && !isUrl(spec) ? await projectBin(splitCommandLine(spec)[0]) : undefined;
      const why = notMcp(err, step) ?? (/timed out|timeout/i.test(String(err)) ? `did not answer within ${startMs / 1000} s` : (err as { code?: unknown }).code === -32000 ? 'ended before it answered' : isUrl(spec) ? describeUrl(err, httpTarget(spec).url, urlSecrets(spec)) : `could not start: ${folder ?? (bin ? installedHere(bin) : describe(err))}`);
      const shown = shownSpec(spec);
      throw new ToolSourceError(`MCP server ${shown}: ${shown === spec ? why : why.replaceAll(spec, shown).replaceAll(httpTarget(spec).url.href, shown)}${said()}`, 'start');
    }
  }
  const info = client.getServerVersion();
  name = info?.name || (isUrl(spec) ? new URL(spec).host : splitCommandLine(spec)[0]!.split('/').pop()!);
  const tools: Tool[] = listed.tools.map((t) => ({
    name: t.name,
    description: t.description,
    parameters: t.inputSchema as Record<string, unknown>,
    source: `mcp ${name}`,
    run: async (args, signal, call): Promise<ToolResult> => {
      try {
        return mcpResult(await callMcpTool(client, { name: t.name, arguments: args }, { signal, timeout: NO_BOUND }, call?.progress));
      } catch (err) {
        if (ended) {
          await close();
          throw new ToolSourceError(`MCP server ${name} ended during a call of ${t.name}${stdio?.refused ? `: ${stdio.refused}` : said()}`, 'ended');
        }
        if (signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError') {
          await close();
          throw new ToolSourceError(`MCP server ${name} did not answer a call of ${t.name} in time (${call?.timeoutName ?? 'the timeout'}${call?.timeoutMs === undefined ? '' : ` ${call.timeoutMs / 1000}s`})`, 'hung');
        }
        if (signal.aborted) throw signal.reason;
        // Read by the model: a server that echoes its URL's secrets (a token in the query) has them hidden.
        const bad = notMcp(err, 'tools/call');
        if (bad) return { ok: false, text: `the MCP server ${bad}` };
        return { ok: false, text: `the MCP server refused the call: ${hideSecrets(err instanceof Error ? err.message : String(err), isUrl(spec) ? urlSecrets(spec) : [])}` };
      }
    },
  }));
  return { name, spec, tools, close: close };
}
