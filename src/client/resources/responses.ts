import type { JSONObject } from '../types.js';
import { StreamError } from '../errors.js';
import { callCredentials } from '../credentials.js';
import { answeringHead, EventStream, Resource, type AnsweringOptions, type CallOptions } from './shared.js';
import { checkShape, SHAPES } from '../answer-shape.js';
import { unfinished } from '../connection-errors.js';

export interface ResponsesRequest {
  input: string | JSONObject[];
  model?: string | undefined;
  [key: string]: unknown;
}

export interface ResponsesResult {
  id: string;
  object: 'response';
  status: 'completed' | 'incomplete' | 'in_progress' | 'failed' | 'cancelled' | 'queued';
  output: JSONObject[];
  output_text?: string | undefined;
  error: { code: string; message: string } | null;
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number; cost?: number | undefined } | null | undefined;
  router_metadata?: JSONObject | undefined;
  openrouter_metadata?: JSONObject | undefined;
  [key: string]: unknown;
}

interface EventBase {
  sequence_number?: number | undefined;
}

/** Events that carry the whole response (created, in progress, and the final ones). */
export interface ResponseLifecycleEvent extends EventBase {
  type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed' | 'response.queued';
  response: ResponsesResult;
}

export interface ResponseTextDeltaEvent extends EventBase {
  type: 'response.output_text.delta' | 'response.refusal.delta';
  delta: string;
  item_id?: string | undefined;
  output_index?: number | undefined;
  content_index?: number | undefined;
}

export interface ResponseErrorEvent extends EventBase {
  type: 'error';
  code?: string | number | undefined;
  message?: string | undefined;
}

/** Any other of the many event kinds (output items, reasoning, tool calls): passed through as sent. */
export interface ResponseOtherEvent extends EventBase {
  type: `response.${string}`;
  [key: string]: unknown;
}

/** A Responses stream event, discriminated by `type` (as openai-node's ResponseStreamEvent). */
export type ResponsesEvent = ResponseLifecycleEvent | ResponseTextDeltaEvent | ResponseErrorEvent | ResponseOtherEvent;

/** A piece of the answer's text: output text, or a refusal (the model's words too). */
export const isTextDelta = (ev: ResponsesEvent): ev is ResponseTextDeltaEvent => ev.type === 'response.output_text.delta' || ev.type === 'response.refusal.delta';
export const isFinalResponse = (ev: ResponsesEvent): ev is ResponseLifecycleEvent => ev.type === 'response.completed' || ev.type === 'response.incomplete';

const FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

export class Responses extends Resource {
  /** `answering`: as chat.create's, the answer's generation id as its head arrives. */
  create(params: ResponsesRequest, opts: AnsweringOptions = {}): Promise<ResponsesResult> {
    const [call, head] = answeringHead(opts);
    return this.request('POST', '/responses', call, { body: { ...params, stream: false }, retry: 'paid', ...head }, SHAPES.response);
  }

  /** Typed events; `response.failed` and `error` are thrown as StreamError. */
  async stream(params: ResponsesRequest, opts: CallOptions = {}): Promise<EventStream<ResponsesEvent>> {
    const path = '/responses';
    const res = await this.postStream(path, { ...params, stream: true }, opts);
    return new EventStream<ResponsesEvent>(res, this.core.url(path), {
      core: this.core,
      // Some services end with `[DONE]`, as chat does; before a final event, that is a cut stream.
      terminator: '[DONE]',
      signal: opts.signal,
      atEnd: () => {
        throw unfinished('no response.completed');
      },
      map: ({ data }) => {
        checkShape(data, SHAPES.responseEvent);
        const ev = data as ResponsesEvent;
        if (ev.type === 'response.failed' || ev.type === 'error') {
          const err: { code?: string | number; message?: string } | null | undefined = ev.type === 'error' ? (ev as ResponseErrorEvent) : (ev as ResponseLifecycleEvent).response?.error;
          throw new StreamError(typeof err?.code === 'number' ? err.code : 502, err?.message ?? 'the response failed', {
            code: err?.code,
            errorType: typeof err?.code === 'string' ? err.code : undefined,
            requestId: res.requestId,
            body: ev,
            secrets: callCredentials(this.core, opts.headers),
          });
        }
        return ev;
      },
      isFinal: (ev) => FINAL.has(ev.type),
    });
  }
}
