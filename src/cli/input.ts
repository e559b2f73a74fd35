import { readFileSync } from 'node:fs';
import { usage } from './exit-codes.js';
import type { IO } from './io.js';
import { readStdin } from './run.js';

/**
 * The prompt from arguments and stdin: stdin is read when there are no arguments
 * (and it is not a terminal), or where "-" stands among them.
 */
export async function textFromArgs(args: string[], io: IO, what = 'prompt', example = 'echo hi | router chat'): Promise<string> {
  const fromArgs = args.filter((a) => a !== '-').join(' ');
  const wantsStdin = args.length === 0 ? !io.stdinTTY : args.includes('-');
  const piped = wantsStdin ? (await readStdin()).replace(/\s+$/, '') : '';
  const text = [fromArgs, piped].filter(Boolean).join('\n\n');
  if (!text.trim()) throw usage(`no ${what}: give it as arguments or on stdin (${example})`);
  return text;
}

/** Reads a text file ("-" for stdin) with a one-line error naming the flag. */
export async function readTextFile(flag: string, path: string): Promise<string> {
  try {
    return path === '-' ? await readStdin() : readFileSync(path, 'utf8');
  } catch (err) {
    throw usage(`${flag}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** Reads a JSON file ("-" for stdin) with a one-line error naming the flag. */
export async function readJsonFile(flag: string, path: string): Promise<unknown> {
  const text = await readTextFile(flag, path);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw usage(`${flag}: ${path} is not valid JSON (${(err as Error).message})`);
  }
}

/** The spec's metadata rules: at most 16 pairs, keys up to 64 characters without brackets, values up to 512. */
export function checkMetadataFlags(metadata: Record<string, string> | undefined): void {
  if (!metadata) return;
  const entries = Object.entries(metadata);
  if (entries.length > 16) throw usage('--metadata may be given at most 16 times');
  for (const [k, v] of entries) {
    if (k.length > 64) throw usage(`--metadata key "${k.slice(0, 20)}…" is longer than 64 characters`);
    if (/[[\]]/.test(k)) throw usage(`--metadata key "${k}" must not contain brackets`);
    if (v.length > 512) throw usage(`--metadata value of "${k}" is longer than 512 characters`);
  }
}

export interface ProviderFlags {
  providerOnly?: string[];
  providerOrder?: string[];
  providerIgnore?: string[];
  fallbacks?: boolean;
}

export function providerFrom(o: ProviderFlags): Record<string, unknown> | undefined {
  const provider: Record<string, unknown> = {};
  if (o.providerOnly) provider.only = o.providerOnly;
  if (o.providerOrder) provider.order = o.providerOrder;
  if (o.providerIgnore) provider.ignore = o.providerIgnore;
  if (o.fallbacks === false) provider.allow_fallbacks = false;
  return Object.keys(provider).length ? provider : undefined;
}
