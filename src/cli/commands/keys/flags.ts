/** The flags and arguments of `router keys …`, and their parsers: input checked before anything is sent. */
import { InvalidArgumentError } from '../../commander.js';
import { decimalNumber, integerIn, nonEmpty } from '../../flags/options.js';

/** The columns of a key, piped (list and get): one tab-separated line. */
export const KEY_COLUMNS = 'hash, name, label, state (enabled or disabled), limit, limit remaining, limit reset, usage (USD), expires, created';

/** USD, 0 or more. */
function usd(value: string): number {
  const n = decimalNumber(value);
  if (n === undefined) throw new InvalidArgumentError('not a number of USD.');
  if (n < 0) throw new InvalidArgumentError('must be 0 or more.');
  return n;
}
// 'none' (sent as null) is kept as the word: commander makes a parser's null an empty string.
const usdOrNone = (value: string): number | 'none' => (value.trim() === 'none' ? 'none' : usd(value));
const resetOrNone = (value: string): 'daily' | 'weekly' | 'monthly' | 'none' => {
  if (value === 'none') return value;
  if (value === 'daily' || value === 'weekly' || value === 'monthly') return value;
  throw new InvalidArgumentError('must be daily, weekly, monthly or none.');
};

/** A date (UTC midnight) or a date-time in UTC (Z or +00:00), as the service takes it: ISO 8601 in UTC. */
export function expiryOf(value: string): string {
  const text = value.trim();
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text);
  if (!date && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]00:?00)$/i.test(text)) {
    throw new InvalidArgumentError(/T\d/.test(text) ? 'must be in UTC: end it with Z (2027-12-31T23:59:59Z).' : 'not a date: 2027-12-31, or 2027-12-31T23:59:59Z.');
  }
  const ms = Date.parse(date ? `${text}T00:00:00Z` : text.toUpperCase());
  if (Number.isNaN(ms)) throw new InvalidArgumentError('not a date: 2027-12-31, or 2027-12-31T23:59:59Z.');
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

export const HASH_ARG = { name: '<hash>', help: 'the key\'s hash (64 hex digits, as router keys list prints it)', complete: 'key-hashes' } as const;
const LIMIT_HELP = 'spending limit in USD (0 or more)';
const RESETS = ['daily', 'weekly', 'monthly', 'none'];

export const CREATE_FLAGS = {
  limit: { flags: '--limit <usd>', help: LIMIT_HELP, parse: usd },
  limitReset: { flags: '--limit-reset <when>', help: 'when the limit starts again (midnight UTC; weeks from Monday)', choices: ['daily', 'weekly', 'monthly'] as const, goesWith: ['limit'] },
  expiresAt: { flags: '--expires-at <date>', help: 'when the key stops working: 2027-12-31 (midnight UTC) or 2027-12-31T23:59:59Z (UTC only)', parse: expiryOf },
  includeByokInLimit: { flags: '--include-byok-in-limit', help: 'count usage of your own provider keys (BYOK) against the limit' },
  json: { flags: '--json', help: 'print {data, key}: the key and its description' },
} as const;

export const UPDATE_FLAGS = {
  name: { flags: '--name <name>', help: 'a new name', parse: nonEmpty },
  limit: { flags: '--limit <usd>', help: `${LIMIT_HELP}, or none`, parse: usdOrNone },
  limitReset: { flags: '--limit-reset <when>', help: 'when the limit starts again: daily, weekly, monthly, or none', parse: resetOrNone, values: RESETS },
  disabled: { flags: '--disabled', help: 'disable the key: requests with it are refused (401) until --enabled' },
  enabled: { flags: '--enabled', help: 'enable it again' },
  includeByokInLimit: [
    { flags: '--include-byok-in-limit', help: 'count BYOK usage against the limit' },
    { flags: '--no-include-byok-in-limit', help: 'do not count it' },
  ],
  json: { flags: '--json', help: 'print the key as it now is' },
} as const;

export const LIST_FLAGS = {
  offset: { flags: '--offset <n>', help: 'one page from this many keys on (a page is the service\'s size: 100 on router serve); without it, every key', parse: integerIn(0) },
  includeDisabled: { flags: '--include-disabled', help: 'list disabled keys too' },
  json: { flags: '--json', help: 'print the keys as a JSON array' },
} as const;

