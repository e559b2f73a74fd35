/** `router keys list|create|get|update|delete|current`: the workspace's API keys (the management API's `/v1/keys`). */
import { defineCommand, defineGroup } from '../../define.js';
import { CREATE_FLAGS, HASH_ARG, KEY_COLUMNS, LIST_FLAGS, UPDATE_FLAGS } from './flags.js';

/** The top-level fields of a key's JSON (OpenAPI `API Keys`), for `--json FIELDS`. */
const KEY = ['hash', 'name', 'label', 'disabled', 'limit', 'limit_remaining', 'limit_reset', 'include_byok_in_limit', 'usage', 'usage_daily', 'usage_weekly', 'usage_monthly', 'byok_usage', 'byok_usage_daily', 'byok_usage_weekly', 'byok_usage_monthly', 'created_at', 'updated_at', 'expires_at', 'creator_user_id', 'workspace_id'];
const CURRENT = ['label', 'limit', 'limit_remaining', 'limit_reset', 'include_byok_in_limit', 'usage', 'usage_daily', 'usage_weekly', 'usage_monthly', 'byok_usage', 'byok_usage_daily', 'byok_usage_weekly', 'byok_usage_monthly', 'is_free_tier', 'is_management_key', 'is_provisioning_key', 'expires_at', 'creator_user_id', 'rate_limit'];

const MANAGEMENT_NOTE = 'Needs a management key (ROUTER_MANAGEMENT_KEY or the profile\'s management_key; router serve prints one): a standard key is refused, exit 3.';

const list = defineCommand({
  name: 'list',
  jsonFields: KEY,
  summary: 'list the API keys of the workspace',
  description: 'list the API keys of the workspace (enabled ones unless --include-disabled)',
  flags: LIST_FLAGS,
  notes: `Piped, one tab-separated line per key: ${KEY_COLUMNS} (empty where there is none; "-" on a terminal). The key itself is never listed: the label is it masked, the hash names it.\n${MANAGEMENT_NOTE}`,
  examples: ['router keys list', 'router keys list --include-disabled --json name,hash,disabled'],
  run: async (ctx) => (await import('./run.js')).runList(ctx),
});

const create = defineCommand({
  name: 'create',
  jsonFields: ['data', 'key'],
  summary: 'create an API key, printed this once on stdout',
  description: 'create an API key; prints the key (shown this once) on stdout',
  args: [{ name: '<name>', help: 'a name for the key' }],
  flags: CREATE_FLAGS,
  notes: `The new key goes to stdout, alone on its line, so that it can be captured; the service shows it only in this answer (stderr says so, with the key's hash). ${MANAGEMENT_NOTE}`,
  examples: ['router keys create ci --limit 5 --limit-reset daily \\\n--expires-at 2099-12-31 > ci-key.txt', 'router keys create scratch --json --jq .data.hash'],
  run: async (ctx, name) => (await import('./run.js')).runCreate(ctx, name),
});

const get = defineCommand({
  name: 'get',
  jsonFields: KEY,
  summary: 'show one API key by its hash: limit, usage, expiry',
  args: [HASH_ARG],
  flags: { json: { flags: '--json', help: 'print the key as the service describes it' } },
  notes: `On a terminal, a description; piped, one tab-separated line as keys list prints it: ${KEY_COLUMNS}.\n${MANAGEMENT_NOTE}`,
  examples: ['hash=$(router keys create temp --json --jq .data.hash)', 'router keys get "$hash"', 'router keys get "$hash" --json --jq .usage'],
  run: async (ctx, hash) => (await import('./run.js')).runGet(ctx, hash),
});

const update = defineCommand({
  name: 'update',
  jsonFields: KEY,
  summary: 'change an API key: name, limit, reset, disabled',
  description: 'change an API key: name, limit, limit reset, disabled or enabled',
  args: [HASH_ARG],
  flags: UPDATE_FLAGS,
  notes: `Only what is given changes; at least one change is needed. Piped, the key as it now is, one line as keys list prints it.\n${MANAGEMENT_NOTE}`,
  examples: ['hash=$(router keys create capped --json --jq .data.hash)', 'router keys update "$hash" --limit 10 --limit-reset monthly', 'router keys update "$hash" --disabled', 'router keys update "$hash" --enabled --limit none'],
  run: async (ctx, hash) => (await import('./run.js')).runUpdate(ctx, hash),
});

const remove = defineCommand({
  name: 'delete',
  summary: 'delete an API key',
  description: 'delete an API key: requests with it are refused from then on',
  args: [HASH_ARG],
  notes: MANAGEMENT_NOTE,
  examples: ['hash=$(router keys create gone --json --jq .data.hash)', 'router keys delete "$hash"'],
  run: async (ctx, hash) => (await import('./run.js')).runDelete(ctx, hash),
});

const current = defineCommand({
  name: 'current',
  jsonFields: CURRENT,
  summary: 'the key router calls with: label, limit, usage',
  description: 'the key router calls with (GET /v1/key): label, limit, usage, kind',
  flags: {
    management: { flags: '--management', help: 'the management key instead of the API key' },
    json: { flags: '--json', help: 'print the service\'s answer (data)' },
  },
  notes: 'Any key may ask about itself. Piped, one tab-separated line: label, kind (key or management), limit, limit remaining, limit reset, usage, usage today, this week, this month (USD), expires.',
  examples: ['router keys current', 'router keys current --management --json --jq .is_management_key'],
  run: async (ctx) => (await import('./run.js')).runCurrent(ctx),
});

export const keys = defineGroup({
  name: 'keys',
  summary: "manage the workspace's API keys (management key)",
  description: "The workspace's API keys, through the management API: list them, create one (its key printed once), show, change (limit, reset, disabled) and delete one by its hash; current: the key in use.",
  commands: [list, create, get, update, remove, current],
  examples: ['router keys current', 'hash=$(router keys create tryout --json --jq .data.hash)', 'router keys update "$hash" --limit 1', 'router keys delete "$hash"'],
  notes: `Piped, list, get and update print one tab-separated line per key: ${KEY_COLUMNS}. --json prints JSON.`,
});
