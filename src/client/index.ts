import { HttpCore, type ClientOptions } from './core.js';
import { Chat } from './resources/chat.js';
import { Batches } from './resources/batches.js';

export * from './errors.js';
export * from './types.js';
export { DEFAULT_API_ROOT, HttpCore, parseRetryAfter, type ClientOptions, type RetryInfo } from './core.js';
export { parseSSE, type SSEEvent } from './sse.js';
export type { CallOptions } from './resources/shared.js';
export type { BatchListQuery, BatchHead } from './resources/batches.js';
export { ArraySplitter } from './json-split.js';

/** Typed client for the Model Routing Service API: one property per resource over one HTTP core. */
export class RouterClient {
  readonly core: HttpCore;
  readonly chat: Chat;
  readonly batches: Batches;

  constructor(opts: ClientOptions = {}) {
    this.core = new HttpCore(opts);
    this.chat = new Chat(this.core);
    this.batches = new Batches(this.core);
  }

  close(): Promise<void> {
    return this.core.close();
  }
}
