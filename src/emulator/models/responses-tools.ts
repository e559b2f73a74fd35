/**
 * `local/tools` in the Responses API: it calls Responses' function tools (`{type: function, name,
 * parameters}`) with `function_call` output items, which are the caller's to run; given their
 * `function_call_output` items, it answers in text from them, as in chat.
 */
import { callTools, type FunctionTool } from './tools-model.js';
import { randomHex } from '../http/ids.js';
import { bad } from '../http/validate.js';

type Body = Record<string, unknown>;

function functionTools(tools: unknown): FunctionTool[] {
  if (!Array.isArray(tools)) return [];
  const out: FunctionTool[] = [];
  tools.forEach((t: Body, i) => {
    if (!t || typeof t !== 'object' || t.type !== 'function') return;
    if (typeof t.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(t.name)) bad(`tools[${i}].name must be 1 to 64 letters, digits, _ or -`);
    if (t.parameters !== undefined && t.parameters !== null && (typeof t.parameters !== 'object' || Array.isArray(t.parameters))) bad(`tools[${i}].parameters must be a JSON schema object`);
    out.push({ name: t.name, parameters: (t.parameters as Body | null | undefined) ?? { type: 'object', properties: {} } });
  });
  return out;
}

/** The `function_call` items local/tools answers with, or undefined when it answers in text (no function tools, `tool_choice: none`, or the last item an output). */
export function functionCallItems(modelId: string, body: Body, items: Body[], lastUser: string): Body[] | undefined {
  if (modelId !== 'local/tools' || body.tool_choice === 'none' || items[items.length - 1]?.type === 'function_call_output') return undefined;
  const tools = functionTools(body.tools);
  if (!tools.length) return undefined;
  const choice = body.tool_choice as Body | undefined;
  const named = choice?.type === 'function' ? { type: 'function', function: { name: choice.name } } : choice;
  return callTools(tools, named, lastUser, body.parallel_tool_calls !== false).map((c) => ({ type: 'function_call', id: `fc_${randomHex(12)}`, call_id: c.id, name: c.function.name, arguments: c.function.arguments, status: 'completed' }));
}

/** Responses input items as chat messages, so that chat's local/tools reads the calls and their outputs (other items as they are). */
export function asChatMessages(items: Body[]): Body[] {
  const out: Body[] = [];
  let turn: Body[] | undefined;
  for (const it of items) {
    const call = { id: it.call_id, type: 'function', function: { name: it.name, arguments: it.arguments } };
    // Calls in a row are one assistant turn.
    if (it.type === 'function_call' && turn) turn.push(call);
    else if (it.type === 'function_call') out.push({ role: 'assistant', content: null, tool_calls: (turn = [call]) });
    else if (it.type === 'function_call_output') out.push({ role: 'tool', tool_call_id: it.call_id, content: it.output });
    else out.push(it);
    if (it.type !== 'function_call') turn = undefined;
  }
  return out;
}

/** The stream events of function call items from `at` on: each added, its arguments in one delta, done. */
export function functionCallEvents(calls: Body[], at: number): Body[] {
  return calls.flatMap((call, i) => [
    { type: 'response.output_item.added', output_index: at + i, item: { ...call, arguments: '', status: 'in_progress' } },
    { type: 'response.function_call_arguments.delta', item_id: call.id, output_index: at + i, delta: call.arguments },
    { type: 'response.function_call_arguments.done', item_id: call.id, output_index: at + i, name: call.name, arguments: call.arguments },
    { type: 'response.output_item.done', output_index: at + i, item: call },
  ]);
}
