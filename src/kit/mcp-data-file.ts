/**
 * A `--mcp` given a file that is no program (`--mcp data.jsonl`): the shell's "not found" or "not executable" said
 * what is wrong with a command, not that the file is data; this says what the file is and what --mcp takes.
 */
import { open, stat } from 'node:fs/promises';

const TAKES = "--mcp takes a server's command line (npx -y PACKAGE, ./server.py) or its URL";

/** What the start of a file looks like it holds, in a few words. */
function kindOf(file: string, head: string): string {
  const lines = head.split('\n').filter((l) => l.trim());
  const parses = (l: string) => {
    try {
      return JSON.parse(l) as unknown;
    } catch {
      return undefined;
    }
  };
  const first = lines.length ? parses(lines[0]!) : undefined;
  if (first && typeof first === 'object' && (lines.length > 1 || /\.jsonl$/i.test(file))) {
    const batch = 'custom_id' in first && 'body' in first;
    return `a file of JSON lines${batch ? ` (a batch's requests: router batch create ${file})` : ''}`;
  }
  if (parses(head) !== undefined || /\.json$/i.test(file)) return 'a JSON file';
  return head.includes('\0') ? 'a file of data (not text)' : 'a text file';
}

/** Why `argv` (one word, a file here that could not be started: `code` ENOENT or EACCES) is no server; undefined for any other. */
export async function dataFileProgram(argv: readonly string[], code: unknown): Promise<string | undefined> {
  if (argv.length !== 1 || (code !== 'ENOENT' && code !== 'EACCES')) return undefined;
  const file = argv[0]!;
  // A pipe (`--mcp <(cmd)`) is left unread: what it holds is no program all the same.
  const found = await stat(file).catch(() => undefined);
  if (found?.isFIFO() || found?.isCharacterDevice()) return `it is a pipe or a device, not a server: ${TAKES}`;
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return undefined;
    const buffer = Buffer.alloc(Math.min(stats.size, 65_536));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const head = buffer.subarray(0, bytesRead).toString('utf8');
    const runnable = head.startsWith('#!') || (stats.mode & 0o111) !== 0;
    // A program here that the shell looked for on PATH (a bare name): its path runs it. One without its execute bit: the shell's words hold.
    if (runnable) return code === 'ENOENT' && !file.includes('/') ? `${file} is a file here, not a command on PATH: give its path, --mcp ./${file}` : undefined;
    return `it is ${kindOf(file, head)}, not a server: ${TAKES}`;
  } finally {
    await handle.close();
  }
}
