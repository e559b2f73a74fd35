/**
 * A `--mcp` given another program's file of MCP servers (Claude's and Cursor's `mcpServers`, VS Code's `servers`,
 * crush's `mcp`): no server to start, but each of its servers as the value that starts it here.
 */
import { MAX_LOCAL_FILE_BYTES } from '../internal/local-file.js';
import { readNamedFile } from '../internal/named-input.js';

const KEYS = ['mcpServers', 'servers', 'mcp', 'context_servers'];
type Entry = { command?: unknown; args?: unknown; url?: unknown };

/** A word of a command line, quoted for a shell where it must be. */
const shellWord = (w: string): string => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`);

/** What the one word of `argv` names, a file of JSON, holds; undefined for more words, no such file, or no JSON. */
async function jsonFile(argv: readonly string[]): Promise<unknown> {
  if (argv.length !== 1) return undefined;
  try {
    // Within a bound: `--mcp /dev/zero` read 2 GiB before it gave up.
    return JSON.parse((await readNamedFile(argv[0]!, MAX_LOCAL_FILE_BYTES, () => new RangeError('too large'))).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Why `argv` (one word, a JSON file of MCP servers) starts nothing, and each server's --mcp value; undefined for any other. */
export async function serversFileProgram(argv: readonly string[]): Promise<string | undefined> {
  const value = await jsonFile(argv);
  if (value === undefined) return undefined;
  const key = value && typeof value === 'object' ? KEYS.find((k) => (value as Record<string, unknown>)[k] && typeof (value as Record<string, unknown>)[k] === 'object') : undefined;
  if (!key) return undefined;
  const entries = Object.values((value as Record<string, Record<string, Entry>>)[key]!);
  const each = entries.flatMap((e) => {
    if (typeof e?.url === 'string') return [e.url];
    if (typeof e?.command !== 'string') return [];
    const args = Array.isArray(e.args) ? e.args.filter((a): a is string => typeof a === 'string') : [];
    return [[e.command, ...args].map(shellWord).join(' ')];
  });
  const shown = each.slice(0, 3).map((s) => `--mcp ${shellWord(s)}`).join(' ');
  return `it is a file of MCP servers ("${key}"), not a server: give each server as --mcp COMMAND or --mcp URL${shown ? `, as ${shown}` : ''}`;
}

/** Why `argv` (one word, a --tools file or a --schema file) starts no MCP server, and the flag that takes it; undefined for any other. */
export async function flagFileProgram(argv: readonly string[]): Promise<string | undefined> {
  const value = await jsonFile(argv);
  if (value === undefined) return undefined;
  const file = shellWord(argv[0]!);
  if (isToolsValue(value)) return `it is a file of tools, not a server: give it as --tools ${file}`;
  const o = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  if (o && (typeof o.type === 'string' || (o.properties && typeof o.properties === 'object') || typeof o.$schema === 'string')) return `it is a JSON schema, not a server: --schema ${file} asks for an answer that follows it`;
  return undefined;
}

/** A --tools file's JSON: an array of function tools (chat's nested shape or Responses' flat one), or one such tool. */
export function isToolsValue(value: unknown): boolean {
  const isTool = (t: unknown) => !!t && typeof t === 'object' && ((t as { type?: unknown }).type === 'function' || typeof (t as { function?: unknown }).function === 'object');
  return Array.isArray(value) ? value.length > 0 && value.every(isTool) : isTool(value);
}
