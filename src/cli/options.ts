import { InvalidArgumentError, type Command } from './commander.js';

/** Option-argument parsers: range checks happen here, before anything is sent. */
export function numberIn(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('not a number.');
    if (n < min || n > max) throw new InvalidArgumentError(`must be between ${min} and ${max}.`);
    return n;
  };
}

export function integerIn(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('not an integer.');
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(max === Number.MAX_SAFE_INTEGER ? `must be at least ${min}.` : `must be between ${min} and ${max}.`);
    return n;
  };
}

/** Repeatable option: collects every occurrence. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Comma-separated list, also repeatable. */
export function commaList(value: string, previous: string[] = []): string[] {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError('empty list.');
  return [...previous, ...items];
}

/** Repeatable `key=value`. */
export function keyValue(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('expected key=value.');
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

export function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty.');
  return value;
}

export function maxLength(n: number) {
  return (value: string): string => {
    if (value.length > n) throw new InvalidArgumentError(`at most ${n} characters.`);
    return value;
  };
}

/** The routing and observability flags that chat and responses share, with the spec's limits. */
export function addRoutingFlags(cmd: Command): Command {
  return addSessionFlags(cmd)
    .option('--metadata <key=value>', 'metadata pair, repeatable (<= 16; keys <= 64, values <= 512 chars)', keyValue)
    .option('--provider-only <slugs>', 'only these providers, comma-separated', commaList)
    .option('--provider-order <slugs>', 'try providers in this order, comma-separated', commaList)
    .option('--provider-ignore <slugs>', 'never these providers, comma-separated', commaList)
    .option('--no-fallbacks', 'do not fall back to other providers')
    .option('--router-metadata', 'ask for routing metadata (printed to stderr; in --json output)');
}

/** The model and sampling flags chat and responses share. */
export function addModelFlags(cmd: Command): Command {
  return cmd
    .option('-m, --model <id>', "model, <author>/<slug> (default: the profile's model)")
    .option('--models <ids>', 'fallback models, comma-separated, tried in order', commaList)
    .option('-t, --temperature <t>', 'sampling temperature, 0 to 2', numberIn(0, 2))
    .option('--top-p <p>', 'nucleus sampling, 0 to 1', numberIn(0, 1));
}

/** --session and --user, with the spec's 256-character limits (chat, responses, speech, decisions). */
export function addSessionFlags(cmd: Command): Command {
  return cmd
    .option('--session <id>', 'session id for grouping (and sticky routing), <= 256 chars', maxLength(256))
    .option('--user <id>', 'end-user identifier, <= 256 chars', maxLength(256));
}
