import type { ChatChunk, ChatCompletion, ChatCompletionRequest } from '../types.js';
import { StreamError } from '../errors.js';
import { callCredentials } from '../credentials.js';
import { answeringHead, EventStream, Resource, type AnsweringOptions, type CallOptions } from './shared.js';
import { TextDeltaReader } from '../fast-delta.js';
import { checkShape, SHAPES } from '../answer-shape.js';
import { chunkFailure, failedAnswer } from '../answer-reading.js';
import { unfinished } from '../connection-errors.js';

/** The text a chunk adds (its first choice's delta content, or refusal), or '' when it adds none. */
export function deltaText(chunk: ChatChunk): string {
  const delta = chunk.choices[0]?.delta;
  const content = delta?.content;
  if (typeof content === 'string' && content) return content;
  return typeof delta?.refusal === 'string' ? delta.refusal : '';
}

export type ChatCreateOptions = AnsweringOptions;

export class Chat extends Resource {
  create(params: ChatCompletionRequest, opts: ChatCreateOptions = {}): Promise<ChatCompletion> {
    const [call, head] = answeringHead(opts);
    return this.request('POST', '/chat/completions', call, { body: { ...params, stream: false }, retry: 'paid', ...head }, SHAPES.chatCompletion);
  }

  /**
   * Streams chunks. Usage arrives once, in a last chunk with `choices: []`.
   * An error after the first token arrives as a chunk with a top-level `error`: it is thrown as StreamError.
   * Retries happen only before the first byte of the answer.
   */
  stream(params: ChatCompletionRequest, opts: CallOptions = {}): Promise<EventStream<ChatChunk>> {
    return this.open(params, opts, false);
  }

  /**
   * The same stream for a reader of text: chunks that carry only text are read without a full JSON
   * parse and hold only `choices[0].delta.content`, those that arrived together joined into one (the
   * others come whole). Several times cheaper.
   */
  streamText(params: ChatCompletionRequest, opts: CallOptions = {}): Promise<EventStream<ChatChunk>> {
    return this.open(params, opts, true);
  }

  private async open(params: ChatCompletionRequest, opts: CallOptions, textOnly: boolean): Promise<EventStream<ChatChunk>> {
    const path = '/chat/completions';
    const res = await this.postStream(path, { ...params, stream: true, stream_options: { ...params.stream_options, include_usage: params.stream_options?.include_usage ?? true } }, opts);
    // A stream that ends without a single choice is an empty answer, not a success; one whose choices
    // never got a finish_reason was cut, whatever its end said.
    let choices = 0;
    const open = new Set<number>();
    const textChunk = (content: string) => {
      choices++;
      open.add(0);
      return { choices: [{ index: 0, delta: { content }, finish_reason: null }] } as unknown as ChatChunk;
    };
    const fast = textOnly ? new TextDeltaReader(textChunk) : undefined;
    return new EventStream<ChatChunk>(res, this.core.url(path), {
      core: this.core,
      terminator: '[DONE]',
      fast,
      signal: opts.signal,
      atEnd: () => {
        if (choices === 0) throw failedAnswer('the answer holds no choice (an empty answer)', undefined, undefined, res.requestId);
        if (open.size > 0) throw unfinished('no finish_reason');
      },
      map: ({ data }) => {
        const chunk = data as ChatChunk;
        if (chunk?.error) {
          const code = chunk.error.code;
          throw new StreamError(typeof code === 'number' ? code : 500, chunk.error.message, {
            code,
            errorType: chunk.error.metadata?.error_type,
            requestId: res.requestId,
            body: chunk,
            secrets: callCredentials(this.core, opts.headers),
          });
        }
        checkShape(chunk, SHAPES.chatChunk);
        choices += chunk.choices.length;
        for (const c of chunk.choices) {
          if (c?.finish_reason == null) open.add(c?.index ?? 0);
          else open.delete(c.index ?? 0);
        }
        return chunk;
      },
      // A choice that finished with "error" (no top-level error): its text is handed out, then the failure.
      failureOf: (chunk) => chunkFailure(chunk, res.requestId),
    });
  }
}
