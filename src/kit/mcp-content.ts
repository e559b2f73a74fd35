/** An MCP tool result as the tool loop passes it on: text as text, images as images, resources by their text or a line. */
import type { ToolImage, ToolResult } from './tool.js';
import { MAX_RESULT_BYTES } from './command-tool.js';

type Part = Record<string, unknown>;

export function mcpResult(result: Record<string, unknown>): ToolResult {
  const texts: string[] = [];
  const images: ToolImage[] = [];
  for (const part of (result.content as Part[] | undefined) ?? []) {
    if (part.type === 'text') texts.push(String(part.text ?? ''));
    else if (part.type === 'image' && typeof part.data === 'string') {
      images.push({ mimeType: String(part.mimeType ?? 'image/png'), data: part.data });
      texts.push(`[image ${String(part.mimeType ?? '')}]`);
    } else if (part.type === 'resource') {
      const r = (part.resource ?? {}) as Part;
      if (typeof r.text === 'string') texts.push(`[resource ${String(r.uri)}]\n${r.text}`);
      else if (typeof r.blob === 'string' && String(r.mimeType ?? '').startsWith('image/')) {
        images.push({ mimeType: String(r.mimeType), data: r.blob });
        texts.push(`[resource ${String(r.uri)}: an image]`);
      } else texts.push(`[resource ${String(r.uri)} (${String(r.mimeType ?? 'binary')}): not shown to the model]`);
    } else if (part.type === 'resource_link') texts.push(`[resource link ${String(part.uri)}${part.name ? ` (${String(part.name)})` : ''}]`);
    else texts.push(`[${String(part.type)} content: not shown to the model]`);
  }
  if (!texts.length && result.structuredContent !== undefined) texts.push(JSON.stringify(result.structuredContent));
  // A result of the older protocol: `toolResult`.
  if (!texts.length && result.toolResult !== undefined) texts.push(typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult));
  const text = texts.join('\n');
  const size = Buffer.byteLength(text);
  const cut = size > MAX_RESULT_BYTES ? { outputCut: [{ stream: 'result' as const, kept: MAX_RESULT_BYTES, size }] } : {};
  return { ok: result.isError !== true, text: cutText(text, size), ...cut, ...(images.length ? { images } : {}) };
}

/** A result's text (of `size` bytes) as commands' is kept: its first MiB, and a line saying what was cut. */
function cutText(text: string, size: number): string {
  if (size <= MAX_RESULT_BYTES) return text;
  const kept = Buffer.from(text).subarray(0, MAX_RESULT_BYTES).toString('utf8').replace(/\uFFFD$/, '');
  return `${kept}\n[router: the result was cut at ${MAX_RESULT_BYTES / 1024 / 1024} MiB of ${size} bytes]`;
}
