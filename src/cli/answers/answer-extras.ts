/** What an answer holds beyond its text, as the CLI shows it on stderr (citations) and reads it from a Responses result. */
import type { AssembledMessage } from '../../client/message-assembler.js';

export { MessageAssembler, messageOf, type AssembledMessage, type ToolCall } from '../../client/message-assembler.js';

type Body = Record<string, unknown>;

/** A citation in one line: its title and URL (url, web-search and file kinds). */
export function describeAnnotation(a: Body): string {
  const inner = (a[a.type as string] ?? a) as Body;
  const title = typeof inner.title === 'string' ? inner.title : typeof inner.name === 'string' ? inner.name : '';
  const where = typeof inner.url === 'string' ? inner.url : typeof inner.hash === 'string' ? `file ${inner.hash}` : String(a.type);
  return title ? `${title} <${where}>` : where;
}

/** A Responses result's text, citations, generated images and function calls, as an assistant message (its output_text parts joined). */
export function responseMessage(r: { output?: unknown }): AssembledMessage {
  const parts = (Array.isArray(r.output) ? (r.output as Body[]) : []).flatMap((item) => (item?.type === 'message' && Array.isArray(item.content) ? (item.content as Body[]) : []));
  const texts = parts.filter((p) => p?.type === 'output_text');
  const annotations = texts.flatMap((p) => (Array.isArray(p.annotations) ? (p.annotations as Body[]) : []));
  const images = (Array.isArray(r.output) ? (r.output as Body[]) : [])
    .filter((item) => item?.type === 'image_generation_call' && typeof item.result === 'string' && item.result)
    .map((item) => ({ type: 'image_url' as const, image_url: { url: /^(data:|https?:)/.test(item.result as string) ? (item.result as string) : `data:image/png;base64,${item.result as string}` } }));
  const calls = functionCalls(r);
  return { role: 'assistant', content: texts.map((p) => String(p.text ?? '')).join(''), ...(annotations.length ? { annotations } : {}), ...(images.length ? { images } : {}), ...(calls.length ? { tool_calls: calls } : {}) };
}

/** A Responses result's function calls (output items of type `function_call`), as chat's tool calls: the caller runs them. */
export function functionCalls(r: { output?: unknown } | undefined): NonNullable<AssembledMessage['tool_calls']> {
  const items = (Array.isArray(r?.output) ? (r.output as Body[]) : []).filter((item) => item?.type === 'function_call');
  return items.map((item, index) => ({ index, id: String(item.call_id ?? item.id ?? ''), type: 'function', function: { name: String(item.name ?? ''), arguments: typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}) } }));
}

/** The summary text of a Responses result's reasoning items, joined. */
export function reasoningSummary(r: { output?: unknown }): string {
  const items = (Array.isArray(r.output) ? (r.output as Body[]) : []).filter((item) => item?.type === 'reasoning');
  return items.flatMap((item) => (Array.isArray(item.summary) ? (item.summary as Body[]) : [])).map((s) => String(s?.text ?? '')).join('\n');
}
