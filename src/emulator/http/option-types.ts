import { bad } from './validate.js';

/*
 * The types the spec gives to the options of chat and Responses (by name, or by meaning where the
 * name is not shown): a value of another type is a 400, never quietly read as something else.
 */

type Body = Record<string, unknown>;

const isObject = (v: unknown): v is Body => v !== null && typeof v === 'object' && !Array.isArray(v);
const given = (v: unknown) => v !== undefined && v !== null;

export function optBoolean(body: Body, field: string, path = field): void {
  if (given(body[field]) && typeof body[field] !== 'boolean') bad(`${path} must be a boolean`);
}

export function optObject(body: Body, field: string, path = field): Body | undefined {
  const v = body[field];
  if (!given(v)) return undefined;
  if (!isObject(v)) bad(`${path} must be an object`);
  return v;
}

/** An array of objects, each with a string `type` (tools) or `id` (plugins). */
function optListOf(body: Body, field: string, key: 'type' | 'id'): Body[] | undefined {
  const v = body[field];
  if (!given(v)) return undefined;
  if (!Array.isArray(v)) bad(`${field} must be an array`);
  v.forEach((item, i) => {
    if (!isObject(item) || typeof item[key] !== 'string') bad(`${field}[${i}] must be an object with a string "${key}"`);
  });
  return v as Body[];
}

/** Stream boolean, with stream options `{include_usage: boolean}`. */
export function checkStream(body: Body): void {
  optBoolean(body, 'stream');
  const options = optObject(body, 'stream_options');
  if (options) optBoolean(options, 'include_usage', 'stream_options.include_usage');
}

/** The options chat and Responses both have, by the types the spec gives them. */
export function checkCommonOptionTypes(body: Body): void {
  checkStream(body);
  const debug = optObject(body, 'debug');
  if (debug) optBoolean(debug, 'echo_upstream_body', 'debug.echo_upstream_body');
  const cache = optObject(body, 'cache_control');
  if (cache && cache.type !== 'ephemeral') bad('cache_control.type must be "ephemeral"');
  optObject(body, 'image_config');
  optObject(body, 'prompt_cache_options');
  optObject(body, 'trace');
  optObject(body, 'reasoning');
  optListOf(body, 'plugins', 'id');
  optListOf(body, 'tools', 'type');
}

/** Chat's own options: logit bias, predicted output, response format, message names, function tools. */
export function checkChatOptionTypes(body: Body): void {
  checkCommonOptionTypes(body);
  const bias = optObject(body, 'logit_bias');
  for (const [token, value] of Object.entries(bias ?? {})) {
    if (!/^\d+$/.test(token)) bad(`logit_bias keys must be token ids, not ${JSON.stringify(token)}`);
    if (typeof value !== 'number' || !Number.isFinite(value)) bad(`logit_bias[${token}] must be a number`);
  }
  optBoolean(body, 'parallel_tool_calls');
  const prediction = optObject(body, 'prediction');
  if (prediction && (prediction.type !== 'content' || typeof prediction.content !== 'string')) bad('prediction must be {type: "content", content: string}');
  const format = optObject(body, 'response_format');
  if (format && typeof format.type !== 'string') bad('response_format must be an object with a string "type"');
  for (const [i, tool] of ((body.tools as Body[] | undefined) ?? []).entries()) {
    if (tool.type === 'function' && (!isObject(tool.function) || typeof tool.function.name !== 'string')) bad(`tools[${i}].function must be an object with a string "name"`);
  }
  (body.messages as Body[]).forEach((m, i) => given(m.name) && typeof m.name !== 'string' && bad(`messages[${i}].name must be a string`));
}

/** Responses' own options: text configuration, prompt template, function tools. */
export function checkResponsesOptionTypes(body: Body): void {
  checkCommonOptionTypes(body);
  const text = optObject(body, 'text');
  if (text && given(text.format) && (!isObject(text.format) || typeof text.format.type !== 'string')) bad('text.format must be an object with a string "type"');
  const prompt = optObject(body, 'prompt');
  if (prompt && typeof prompt.id !== 'string') bad('prompt must be {id, variables} with a string id');
  for (const [i, tool] of ((body.tools as Body[] | undefined) ?? []).entries()) {
    if (tool.type === 'function' && typeof tool.name !== 'string') bad(`tools[${i}] (a function tool) needs a string "name"`);
  }
}
