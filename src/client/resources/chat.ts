import type { ChatChunk, ChatCompletion, ChatCompletionRequest } from '../types.js';
import { StreamError } from '../errors.js';
import { EventStream, Resource, callHeaders, type CallOptions } from './shared.js';

export class Chat extends Resource {
  async create(params: ChatCompletionRequest, opts: CallOptions = {}): Promise<ChatCompletion> {
    const { data } = await this.core.json<ChatCompletion>({
      method: 'POST',
      path: '/chat/completions',
      body: { ...params, stream: false },
      headers: callHeaders(opts),
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
    });
    return data;
  }

  /**
   * Streams chunks. Usage arrives once, in a last chunk with `choices: []`.
   * An error after the first token arrives as a chunk with a top-level `error`: it is thrown as StreamError.
   * Retries happen only before the first byte of the answer.
   */
  async stream(params: ChatCompletionRequest, opts: CallOptions = {}): Promise<AsyncIterable<ChatChunk>> {
    const path = '/chat/completions';
    const res = await this.core.send({
      method: 'POST',
      path,
      body: { ...params, stream: true, stream_options: { include_usage: true, ...params.stream_options } },
      headers: callHeaders(opts),
      accept: 'text/event-stream',
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
    });
    return new EventStream<ChatChunk>(res, this.core.url(path), {
      terminator: '[DONE]',
      map: ({ data }) => {
        const chunk = data as ChatChunk;
        if (chunk.error) {
          const code = chunk.error.code;
          throw new StreamError(typeof code === 'number' ? code : 500, chunk.error.message, {
            code,
            errorType: chunk.error.metadata?.error_type,
            requestId: res.requestId,
            body: chunk,
          });
        }
        return chunk;
      },
    });
  }
}
