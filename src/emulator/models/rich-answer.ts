/** Which answer a chat or Responses request gets beyond plain text: a schema instance, tool calls, reasoning, an image, citations (the models local/vision, local/tools, local/thinker, local/painter). */
import { answerFor, askedSchema } from './json-schema-answer.js';
import type { ModelSpec } from './models.js';
import { paint } from './painter.js';
import { thoughtsOn } from './thinker.js';
import { callTools, checkTools, toolResultsAnswer, type ToolCall } from './tools-model.js';
import { checkInputModalities, describeParts, mediaParts } from './vision.js';
import { bad } from '../http/validate.js';

type Body = Record<string, unknown>;

export type { ToolCall };

/** An assistant message beyond plain text: what the new models and options add to an answer. */
export interface RichMessage {
  content: string | null;
  reasoning?: string;
  reasoning_details?: Body[];
  tool_calls?: ToolCall[];
  images?: { type: 'image_url'; image_url: { url: string } }[];
  annotations?: Body[];
  finishReason: 'stop' | 'tool_calls' | 'length';
}

/** The web plugin (`plugins: [{id: "web"}]`), unless turned off with `enabled: false`. */
export function wantsWeb(body: Body): boolean {
  const plugins = body.plugins;
  if (plugins === undefined || plugins === null) return false;
  if (!Array.isArray(plugins) || plugins.some((p) => !p || typeof p !== 'object' || typeof (p as Body).id !== 'string')) bad('plugins must be an array of objects with an id');
  return plugins.some((p: Body) => p.id === 'web' && p.enabled !== false);
}

/** url_citation annotations over the answer's first words, as the web plugin gives. */
export function citations(content: string, query: string): Body[] {
  const words = query.match(/[\p{L}\p{N}]+/gu)?.slice(0, 2) ?? ['search'];
  const end = Math.min(content.length, Math.max(1, content.indexOf(' ', 12) === -1 ? content.length : content.indexOf(' ', 12)));
  return words.map((w, i) => ({
    type: 'url_citation',
    url_citation: { url: `https://example.org/${i === 0 ? 'search' : 'wiki'}/${encodeURIComponent(w.toLowerCase())}`, title: `${w} (result ${i + 1})`, start_index: 0, end_index: end, content: `What the web says about ${w}.` },
  }));
}

/**
 * What a chat model answers beyond plain text, or undefined when the plain answer (`baseText()`)
 * stands as it is. Checks the parts and output modalities the model takes first. The plain answer
 * is made only when needed: a plain stream sends its pieces and never joins them.
 */
export function richAnswer(body: Body, model: ModelSpec, messages: Body[], baseText: () => string, lastUser: string): RichMessage | undefined {
  const parts = mediaParts(messages);
  // Output modalities a model cannot give are not an error: it answers in those it gives (text).
  checkInputModalities(model, parts);
  const tools = checkTools(body.tools);
  const schema = askedSchema(body);
  const web = wantsWeb(body);
  const special = ['local/vision', 'local/tools', 'local/thinker', 'local/painter'].includes(model.id);
  if (!special && !schema && !web) return undefined;
  const answer: RichMessage = { content: null, finishReason: 'stop' };
  if (model.id === 'local/tools') {
    const last = messages[messages.length - 1];
    if (tools.length && body.tool_choice !== 'none' && last?.role !== 'tool') {
      return { content: null, tool_calls: callTools(tools, body.tool_choice, lastUser, body.parallel_tool_calls !== false), finishReason: 'tool_calls' };
    }
    answer.content = toolResultsAnswer(messages) ?? baseText();
  }
  if (model.id === 'local/vision') answer.content = describeParts(parts);
  else if (model.id !== 'local/tools' && !schema) answer.content = baseText();
  if (model.id === 'local/thinker') Object.assign(answer, thoughtsOn(lastUser));
  if (model.id === 'local/painter') Object.assign(answer, paint(lastUser));
  if (schema) answer.content = answerFor(schema, messages.map((m) => JSON.stringify(m.content)).join('\n'));
  if (web) answer.annotations = citations(answer.content ?? '', lastUser);
  return answer;
}
