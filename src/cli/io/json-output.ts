/**
 * JSON output for scripts, as gh does it: `--json FIELDS` keeps only those top-level fields (of each
 * item, for lists) and `--jq EXPR` filters the output with jq (built in; raw strings unquoted).
 */
import type { Command, Option } from '../commander.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import { didYouMean } from '../../internal/did-you-mean.js';

const BATCH = ['id', 'object', 'endpoint', 'model', 'completion_window', 'created_at', 'finalized_at', 'status', 'request_counts', 'error', 'results', 'usage'];
const JOB = ['id', 'created_at', 'updated_at', 'input', 'endpoint', 'model', 'provider', 'plain', 'max_requests', 'max_bytes', 'wrapper_bytes', 'requests', 'shards', 'totals', 'cost_bound'];
const CHAT = ['id', 'object', 'created', 'model', 'choices', 'usage', 'system_fingerprint', 'provider', 'service_tier', 'router_metadata', 'openrouter_metadata', 'alignment', 'debug'];
const RESPONSE = ['id', 'object', 'created_at', 'completed_at', 'model', 'status', 'output', 'output_text', 'error', 'incomplete_details', 'instructions', 'metadata', 'temperature', 'top_p', 'max_output_tokens', 'max_tool_calls', 'tools', 'tool_choice', 'prompt', 'prompt_cache_key', 'prompt_cache_options', 'reasoning', 'service_tier', 'text', 'truncation', 'user', 'usage', 'router_metadata', 'openrouter_metadata'];
const MODEL = ['id', 'canonical_slug', 'hugging_face_id', 'name', 'created', 'description', 'context_length', 'architecture', 'pricing', 'top_provider', 'per_request_limits', 'supported_parameters', 'default_parameters', 'supported_voices', 'reasoning', 'links', 'expiration_date', 'knowledge_cutoff'];
const RESPONSE_EVENT = ['type', 'sequence_number', 'response', 'delta', 'item_id', 'output_index', 'content_index', 'item', 'part', 'text'];

/** The top-level fields each command's JSON has (for lists: each item's), known before anything is sent. */
export const JSON_FIELDS: Record<string, readonly string[]> = {
  chat: CHAT,
  responses: [...RESPONSE, ...RESPONSE_EVENT.filter((f) => !RESPONSE.includes(f))],
  embed: ['object', 'data', 'model', 'usage', 'id', 'index', 'input', 'embedding'],
  decide: ['id', 'model', 'provider', 'usage', 'answers'],
  speak: ['file', 'bytes', 'content_type'],
  serve: ['api_root', 'api_key', 'management_key', 'operator_key', 'state_dir'],
  'config get': ['profile', 'setting', 'value'],
  'config list': ['current', 'path', 'profiles'],
  'batch create': BATCH,
  'batch list': BATCH,
  'batch get': BATCH,
  'batch run': JOB,
  'batch jobs': JOB,
  'batch job': JOB,
  'usage': ['since', 'until', 'by', 'rows', 'total', 'budgets', 'checked', 'reconciled', 'not_found', 'pending', 'left', 'stopped', 'reported_cost', 'charged_cost'],
  models: MODEL,
  'models show': MODEL,
  credits: ['total_credits', 'total_usage', 'balance'],
  generation: ['id', 'model', 'total_cost', 'usage', 'created_at', 'provider_name', 'streamed', 'cancelled', 'latency', 'generation_time', 'moderation_latency', 'finish_reason', 'native_finish_reason', 'tokens_prompt', 'tokens_completion', 'native_tokens_prompt', 'native_tokens_completion', 'native_tokens_reasoning', 'native_tokens_cached', 'native_tokens_completion_images', 'is_byok', 'api_type', 'upstream_id', 'upstream_inference_cost', 'cache_discount', 'origin', 'http_referer', 'user_agent', 'external_user', 'session_id', 'request_id', 'router', 'service_tier', 'data_region', 'workspace_id', 'app_id', 'preset_id', 'provider_responses', 'web_search_engine', 'num_media_prompt', 'num_input_audio_prompt', 'num_media_completion', 'num_search_results', 'num_fetches'],
  'auth status': ['profile', 'api_root', 'api_root_from', 'key', 'key_from', 'key_store', 'key_location', 'checked_with', 'details'],
  'auth migrate': ['keychain', 'file', 'moved'],
  'conversations list': ['id', 'title', 'model', 'created_at', 'updated_at', 'turns'],
  'conversations show': ['id', 'title', 'model', 'created_at', 'updated_at', 'messages'],
  'roles list': ['name', 'model', 'settings', 'system'],
  'roles show': ['name', 'path', 'settings', 'system'],
};

/** Commands that take no argument: any word after their `--json` is a field list. */
const NO_ARGUMENTS = new Set(['decide', 'serve', 'config list', 'batch list', 'batch jobs', 'usage', 'roles list', 'credits', 'auth status', 'auth migrate']);

/** The command path an argv runs ("batch get"), skipping global options. */
export function jsonCommandPath(args: string[], withValue: Set<string>): string | undefined {
  const words: string[] = [];
  for (let i = 0; i < args.length && words.length < 2; i++) {
    const a = args[i]!;
    if (withValue.has(a)) i++;
    else if (!a.startsWith('-')) words.push(a);
  }
  const two = words.join(' ');
  return JSON_FIELDS[two] ? two : words[0];
}

/**
 * `--json=FIELDS`, and `--json FIELDS` when every name is a field of the command's JSON, become
 * `--json --json-fields FIELDS`; any other word after `--json` stays an argument (a prompt, an id).
 */
export function rewriteJsonFields(args: string[], path: string | undefined): string[] {
  const known = path ? JSON_FIELDS[path] : undefined;
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return [...out, ...args.slice(i)];
    if (a.startsWith('--json=')) out.push('--json', '--json-fields', a.slice(7));
    else if (a === '--json' && known && args[i + 1] !== undefined && !args[i + 1]!.startsWith('-') && (NO_ARGUMENTS.has(path!) || args[i + 1]!.split(',').every((f) => known.includes(f)))) {
      out.push('--json', '--json-fields', args[++i]!);
    } else out.push(a);
  }
  return out;
}

/** Adds `--jq` (and the hidden `--json-fields`) to every command of the tree that has `--json`. */
export function addJsonFlags(cmd: Command, OptionClass: new (flags: string, description?: string) => Option): void {
  if (cmd.options.some((o) => o.long === '--json')) {
    cmd.addOption(new OptionClass('--jq <expr>', 'filter the JSON output with a jq expression (implies --json; strings print raw)'));
    cmd.addOption(new OptionClass('--json-fields <list>').hideHelp());
  }
  for (const sub of cmd.commands) addJsonFlags(sub, OptionClass);
}

export interface JsonShape {
  fields?: string[];
  jq?: string;
}

/** A guess for a mistyped field: the one it begins (`stat` is status), else the nearest. */
function fieldHint(field: string, known: readonly string[]): string {
  const begun = field.length >= 2 ? known.filter((k) => k.startsWith(field.toLowerCase())) : [];
  if (begun.length === 1) return ` (Did you mean ${begun[0]}?)`;
  if (begun.length > 1) return ` (Did you mean one of ${begun.join(', ')}?)`;
  return didYouMean(field, known);
}

/** Checks `--json FIELDS` against the command's fields: a usage error naming the fields there are. */
export function checkedFields(path: string, list: string): string[] {
  const fields = list.split(',').map((f) => f.trim()).filter(Boolean);
  const known = JSON_FIELDS[path];
  const unknown = known ? fields.filter((f) => !known.includes(f)) : [];
  if (!fields.length || unknown.length) throw usage(`${unknown.length ? `unknown JSON field "${unknown[0]}"${fieldHint(unknown[0]!, known!)}` : 'no JSON fields named'}; fields of "${path}": ${(known ?? []).join(', ')}`);
  return fields;
}

function pick(value: unknown, fields: string[]): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const o = value as Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => f in o).map((f) => [f, o[f]]));
}

/**
 * Only the named fields: of each element of an array; of each item of a list page (unless the
 * fields are the page's own, as an embeddings answer's `model,usage`); else of the object.
 */
export function selectFields(value: unknown, fields: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => pick(v, fields));
  const o = value as { object?: unknown; data?: unknown } | null;
  if (o && o.object === 'list' && Array.isArray(o.data) && !fields.some((f) => f in o)) return { ...o, data: o.data.map((v) => pick(v, fields)) };
  return pick(value, fields);
}

const jqMessage = (err: unknown) =>
  String((err as Error)?.message ?? err)
    // jq-wasm's runtime aborted: a filter that recursed without end, or a value too large for its memory.
    .replace(/^Aborted\(\).*/, 'jq ran out of stack or memory (a filter that recurses without end, or a value too large)')
    .split('\n')[0]!
    .replace(/^jq: error(?: \(at [^)]*\))?: /, '')
    .replace(/ \(Unix shell quoting issues\?\)/, '')
    .replace(/:$/, '');

/** A jq expression that does not compile is refused before anything is sent. */
export async function checkJq(expr: string, signal?: AbortSignal): Promise<void> {
  const { runJqWorker } = await import('./jq-run.js');
  try {
    await runJqWorker('null', expr, [], signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    const text = String((err as Error)?.message ?? err);
    if (/compile error/.test(text)) throw usage(`--jq: ${jqMessage(err)}`);
  }
}

/** Runs the expression over one JSON value; raw strings unquoted, compact unless a terminal. */
export async function runJq(value: unknown, expr: string, tty: boolean, signal?: AbortSignal): Promise<string> {
  const { runJqWorker } = await import('./jq-run.js');
  try {
    return await runJqWorker(JSON.stringify(value), expr, tty ? ['-r'] : ['-r', '-c'], signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new CliError(`--jq: ${jqMessage(err)}`, EXIT.FAILURE);
  }
}
