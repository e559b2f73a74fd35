import type { ChatChunk, ChatCompletion, ChatCompletionRequest } from '../types.js';
import { StreamError } from '../errors.js';
import { EventStream, Resource, type CallOptions } from './shared.js';

export class Chat extends Resource {
  create(params: ChatCompletionRequest, opts: CallOptions = {}): Promise<ChatCompletion> {
    return this.request('POST', '/chat/completions', opts, { body: { ...params, stream: false } });
  }

  /**
   * Streams chunks. Usage arrives once, in a last chunk with `choices: []`.
   * An error after the first token arrives as a chunk with a top-level `error`: it is thrown as StreamError.
   * Retries happen only before the first byte of the answer.
   */
  async stream(params: ChatCompletionRequest, opts: CallOptions = {}): Promise<AsyncIterable<ChatChunk>> {
    const path = '/chat/completions';
    const res = await this.postStream(path, { ...params, stream: true, stream_options: { include_usage: true, ...params.stream_options } }, opts);
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
