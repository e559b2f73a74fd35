import { readFileSync } from 'node:fs';

/**
 * Node decodes the command line as UTF-8, each invalid byte becoming U+FFFD without a word: a
 * prompt typed in Latin-1 would be sent garbled. Where the bytes can be read (/proc/self/cmdline,
 * on Linux), an argument whose U+FFFD came from invalid bytes is found: its index in `args`, the
 * process's last arguments as node decoded them. Elsewhere (or when all is well) undefined.
 */
export function notUtf8Argument(args: readonly string[], cmdline: () => Buffer = () => readFileSync('/proc/self/cmdline')): number | undefined {
  if (!args.some((a) => a.includes('\uFFFD'))) return undefined;
  let raw: Buffer;
  try {
    raw = cmdline();
  } catch {
    return undefined;
  }
  const parts: Buffer[] = [];
  for (let start = 0; start < raw.length; ) {
    const end = raw.indexOf(0, start);
    parts.push(raw.subarray(start, end < 0 ? raw.length : end));
    start = end < 0 ? raw.length : end + 1;
  }
  if (parts.length < args.length) return undefined;
  const tail = parts.slice(parts.length - args.length);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (let i = 0; i < args.length; i++) {
    if (!args[i]!.includes('\uFFFD')) continue;
    // The same argument (node's decoding of these bytes), or the command line is not what we think.
    if (Buffer.from(tail[i]!).toString('utf8') !== args[i]) return undefined;
    try {
      decoder.decode(tail[i]);
    } catch {
      return i;
    }
  }
  return undefined;
}
