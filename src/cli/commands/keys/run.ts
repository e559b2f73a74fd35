/** The work of `router keys …` (definitions in ./index.ts): a request each, printed for a person or a script. */
import type { ApiKey } from '../../../client/resources/keys.js';
import type { KeyInfo } from '../../../client/resources/key.js';
import type { RouterClient } from '../../../client/index.js';
import type { FlagValues } from '../../flags/flags.js';
import { managementRefusal } from '../../context.js';
import { CliError, EXIT, usage } from '../../exit-codes.js';
import { unheard } from '../../service/unheard.js';
import type { RunContext } from '../../run.js';
import type { IO } from '../../io/io.js';
import { table } from '../../io/table.js';
import { described } from '../../io/described.js';
import { dollars, limitText } from '../../service/key-check.js';
import { decimal } from '../../../internal/decimal.js';
import { visible } from '../../../internal/visible.js';
import type { CREATE_FLAGS, LIST_FLAGS, UPDATE_FLAGS } from './flags.js';
import { cutText } from '../../../internal/first-words.js';

const HASH = /^[0-9a-f]{64}$/i;
/** The keys a page of the service's listing holds at most (its own size: 100 on router serve); a page that full may have a next. */
const KEYS_PAGE = 100;

function checkHash(hash: string): string {
  if (!HASH.test(hash)) throw usage(`"${visible(cutText(hash, 70))}" is not a key hash: 64 hex digits, as router keys list prints it (the key itself is never asked for)`);
  return hash.toLowerCase();
}

/** Connects with the management key and runs `call`; a refused key is said as the management key it needed. */
async function managed<T>(ctx: RunContext<unknown>, what: string, call: (client: RouterClient) => Promise<T>): Promise<T> {
  const { client, settings } = await ctx.connect({ management: true });
  try {
    return await call(client);
  } catch (err) {
    throw managementRefusal(err, settings, what);
  } finally {
    await client.close();
  }
}

/** A field: one there is none of is "-" on a terminal and empty piped, as in every tab-separated listing (a script tests for empty). */
const field = (io: IO) => (v: unknown) => (v === null || v === undefined || v === '' ? (io.stdoutTTY ? '-' : '') : typeof v === 'number' ? decimal(v) : visible(String(v)));

/** A key as one line of the listing (piped) or a row of the table: never the key itself, which the service never lists. */
function row(io: IO, k: ApiKey): string[] {
  const f = field(io);
  return [k.hash, visible(k.name), visible(k.label), k.disabled ? 'disabled' : 'enabled', f(k.limit), f(k.limit_remaining), f(k.limit_reset), f(k.usage), f(k.expires_at), f(k.created_at)];
}

function printKeys(io: IO, keys: ApiKey[]): void {
  if (io.stdoutTTY && !keys.length) return io.info('no keys');
  io.out(table(io, ['hash', 'name', 'label', 'state', 'limit', 'left', 'reset', 'usage', 'expires', 'created'], keys.map((k) => row(io, k))));
}

/** One key: on a terminal, a description; piped, its line. */
function printKey(io: IO, k: ApiKey): void {
  if (!io.stdoutTTY) return void io.out(`${row(io, k).join('\t')}\n`);
  const rows: [string, string][] = [
    ['name', visible(k.name)],
    ['hash', k.hash],
    ['label', visible(k.label)],
    ['state', k.disabled ? 'disabled' : 'enabled'],
    ['limit', limitText(k as unknown as KeyInfo) + (k.include_byok_in_limit ? ', BYOK usage counted' : '')],
    // One line each: on one line, with "this month" last, an 80-column terminal cut it.
    ['usage', dollars(k.usage)],
    ['today', dollars(k.usage_daily)],
    ['this week', dollars(k.usage_weekly)],
    ['this month', dollars(k.usage_monthly)],
    ['expires', k.expires_at ?? 'never'],
    ['created', k.created_at],
  ];
  io.out(described(io, rows));
}

export async function runList(ctx: RunContext<FlagValues<typeof LIST_FLAGS>>): Promise<void> {
  const { io, opts, signal } = ctx;
  const keys = await managed(ctx, 'listing keys needs', async (c) => {
    const page = (offset: number | undefined) => c.keys.list({ offset, includeDisabled: opts.includeDisabled }, { signal });
    const all = await page(opts.offset);
    // Without --offset, every key: a full page (100 on router serve) was all a workspace with more was shown, and nothing said so.
    const seen = new Set(all.map((k) => k.hash));
    for (let got = all.length; opts.offset === undefined && got >= KEYS_PAGE; ) {
      // A page of keys already listed (a service that ignores offset) ends it: never a loop without end.
      const next = (await page(all.length)).filter((k) => !seen.has(k.hash) && seen.add(k.hash));
      all.push(...next);
      got = next.length;
    }
    return all;
  });
  if (opts.json) return io.json(keys);
  printKeys(io, keys);
}

export async function runCreate(ctx: RunContext<FlagValues<typeof CREATE_FLAGS>>, name: string): Promise<void> {
  const { io, opts, signal } = ctx;
  if (!name.trim()) throw usage('a key needs a name that is not blank');
  if (opts.expiresAt !== undefined && Date.parse(opts.expiresAt) <= Date.now()) throw usage(`--expires-at ${opts.expiresAt} is past: a key must expire in the future`);
  const body = { name, limit: opts.limit, limit_reset: opts.limitReset, expires_at: opts.expiresAt, include_byok_in_limit: opts.includeByokInLimit };
  const created = await managed(ctx, 'creating a key needs', (c) =>
    unheard(c.keys.create(body, { signal }), `the service may have made key "${visible(name)}" all the same, its key unread: router keys list shows it, and router keys delete HASH removes it`, true),
  );
  // Should stdout fail, the error names the key that now exists, by its hash (the key itself is gone with it).
  io.made(`key "${visible(name)}" was created (hash ${created.data.hash}; router keys delete ${created.data.hash} if its key was lost)`);
  io.note(`warning: the key is shown this once, on stdout: keep it now (its hash, for keys get, update and delete: ${created.data.hash})`);
  if (opts.json) return io.json(created);
  io.out(`${created.key}\n`);
}

export async function runGet(ctx: RunContext<{ json?: boolean }>, hash: string): Promise<void> {
  const { io, opts, signal } = ctx;
  hash = checkHash(hash);
  const key = await managed(ctx, 'keys get needs', (c) => c.keys.get(hash, { signal }));
  if (opts.json) return io.json(key);
  printKey(io, key);
}

export async function runUpdate(ctx: RunContext<FlagValues<typeof UPDATE_FLAGS>>, hash: string): Promise<void> {
  const { io, opts, signal } = ctx;
  hash = checkHash(hash);
  if (opts.disabled && opts.enabled) throw usage('--disabled and --enabled cannot be combined');
  const disabled = opts.disabled ? true : opts.enabled ? false : undefined;
  const none = <T>(v: T | 'none' | undefined) => (v === 'none' ? null : v);
  const changes = { name: opts.name, limit: none(opts.limit), limit_reset: none(opts.limitReset), disabled, include_byok_in_limit: opts.includeByokInLimit };
  if (Object.values(changes).every((v) => v === undefined)) throw usage('nothing to change: give --name, --limit, --limit-reset, --disabled or --enabled, or --[no-]include-byok-in-limit');
  const key = await managed(ctx, 'keys update needs', (c) => c.keys.update(hash, changes, { signal }));
  if (opts.json) return io.json(key);
  printKey(io, key);
}

export async function runDelete(ctx: RunContext<unknown>, hash: string): Promise<void> {
  hash = checkHash(hash);
  await managed(ctx, 'keys delete needs', (c) => unheard(c.keys.delete(hash, { signal: ctx.signal }), `the service may have deleted it all the same: router keys get ${hash} says`, false));
  ctx.io.info(`deleted key ${hash}`);
}

export async function runCurrent(ctx: RunContext<{ management?: boolean; json?: boolean }>): Promise<void> {
  const { io, opts, signal } = ctx;
  if (opts.management && !(await ctx.settings()).from.managementKey) throw new CliError('no management key is set: export ROUTER_MANAGEMENT_KEY=…, or printf %s "$KEY" | router config set management_key', EXIT.AUTH);
  const { client } = await ctx.connect({ management: opts.management });
  let info: KeyInfo;
  try {
    info = await client.keys.current({ signal });
  } finally {
    await client.close();
  }
  if (opts.json) return io.json(info);
  const kind = info.is_management_key ? 'management' : 'key';
  if (!io.stdoutTTY) {
    const cols = [info.label, kind, info.limit, info.limit_remaining, info.limit_reset, info.usage, info.usage_daily, info.usage_weekly, info.usage_monthly, info.expires_at];
    return void io.out(`${cols.map(field(io)).join('\t')}\n`);
  }
  const rows: [string, string][] = [
    ['label', visible(info.label)],
    ['kind', info.is_management_key ? 'management key' : 'API key'],
    ['limit', limitText(info)],
    ['usage', dollars(info.usage)],
    ...(typeof info.usage_daily === 'number' ? ([['today', dollars(info.usage_daily)], ['this week', dollars(info.usage_weekly ?? 0)], ['this month', dollars(info.usage_monthly ?? 0)]] as [string, string][]) : []),
    ['expires', info.expires_at ?? 'never'],
  ];
  io.out(described(io, rows));
}
