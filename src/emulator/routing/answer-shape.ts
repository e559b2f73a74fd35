import { isRecord as isObject } from '../../internal/shape.js';
import { cutText } from '../../internal/first-words.js';

/** What a whole upstream answer must be before it is relayed as one: JSON, an object, with its list. */
type Body = Record<string, unknown>;

/** The list each kind of whole answer carries: a chat completion's `choices`, embeddings' `data`, a response's `output`. */
export type AnswerList = 'choices' | 'data' | 'output';

/**
 * An upstream's whole answer, parsed, a chat answer's reasoning under the service's name (serviceReasoning). A 2xx
 * that is not JSON, not an object, or has no `list` throws (the provider is passed over: `{}`, `null`, an HTML page
 * or `choices: []` is no answer); a refusal (4xx) is its object, or `{}` when it has none.
 */
export function wholeAnswer(text: string, status: number, list: AnswerList): Body {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new Error('an answer that is not JSON');
  }
  if (status < 200 || status >= 300) return isObject(answer) ? answer : {};
  if (!isObject(answer)) throw new Error(`an answer that is not a JSON object: ${cutText(text, 80)}`);
  if (!Array.isArray(answer[list])) throw new Error(`an answer without ${list}: ${cutText(text, 80)}`);
  // A chat completion without a single choice answers nothing (as a stream that ends before any token).
  if (list === 'choices' && !(answer.choices as unknown[]).length) throw new Error(`an answer with no choices: ${cutText(text, 80)}`);
  if (list === 'choices') for (const choice of answer.choices as unknown[]) serviceReasoning(isObject(choice) ? choice.message : undefined);
  return answer;
}

/**
 * Why an upstream refused a request, in its words: OpenAI's `error.message`, Ollama's `error`, vLLM's `message`,
 * FastAPI's `detail` (a string, or a list of `{loc, msg}`: Python servers' 422); else its JSON itself, cut
 * short. Before, any other shape was a bare `HTTP 422`, the reason lost.
 */
export function refusalOf(answer: Body, status: number): string {
  const error = answer.error;
  const message = isObject(error) ? error.message : error ?? answer.message ?? detailOf(answer.detail);
  if (typeof message === 'string' && message) return message;
  const json = JSON.stringify(answer);
  return json === '{}' ? `HTTP ${status}` : `HTTP ${status} ${cutText(json, 200)}`;
}

/** FastAPI's `detail`: its text, or each `{loc: ["body", "messages"], msg}` as `body.messages: msg`. */
function detailOf(detail: unknown): string | undefined {
  if (typeof detail === 'string') return detail;
  if (!Array.isArray(detail)) return undefined;
  const each = detail.map((d) => (isObject(d) && typeof d.msg === 'string' ? `${Array.isArray(d.loc) ? `${d.loc.join('.')}: ` : ''}${d.msg}` : undefined));
  return each.every((e) => e !== undefined) && each.length ? each.join('; ') : undefined;
}

/**
 * A message's or delta's reasoning under the service's name (api.md: `reasoning`), in place: DeepSeek,
 * vLLM, llama.cpp's server and aimock send it as `reasoning_content`, which the service's clients (ours,
 * `--show-reasoning`, generation content) do not read. One that also has `reasoning` is left as it is.
 */
export function serviceReasoning(holder: unknown): void {
  if (!isObject(holder) || typeof holder.reasoning_content !== 'string') return;
  if (holder.reasoning !== undefined && holder.reasoning !== null) return;
  holder.reasoning = holder.reasoning_content;
  delete holder.reasoning_content;
}
