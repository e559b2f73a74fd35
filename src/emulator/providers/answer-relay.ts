import type { Dispatcher } from 'undici';
import { KeyScrub } from './key-scrub.js';
import type { EndRule } from './types.js';

type Controller = Dispatcher.DispatchController;

const DONE = Buffer.from('\n\ndata: [DONE]\n\n');

/**
 * One request's answer on its way from undici to upstreamCall's handler, made once a request with its
 * methods on the prototype (no closures, no wrapper per layer). It is the Dispatcher the call is sent
 * through, the handler undici calls, and the call's EndRule:
 * - every provider key in the answer's bytes becomes `[provider key]` (KeyScrub, which it is), a key
 *   split between two network reads too, so the caller, the cassette, the kept content and the logs all
 *   get the answer without them (none looked for when `keys` is empty);
 * - some servers never send `data: [DONE]` (TGI before 2.2, llama-box, ik_llama.cpp): a chat stream of
 *   theirs that closes cleanly after its last chunk (`endsAnswer`) is handed the [DONE] it left out just
 *   before its end (a blank line first, to end an event left without one), so it is whole, not broken.
 *   Only the end looks at the last event, which `ends` keeps.
 */
export class AnswerRelay extends KeyScrub implements Dispatcher.DispatchHandler, EndRule {
  private h!: Dispatcher.DispatchHandler;
  /** The last event's payload (kept for a chat stream only). */
  private last = '';

  constructor(
    private readonly agent: Dispatcher,
    keys: readonly Buffer[],
    inKeys: Uint8Array,
    /** The chat stream's end, one choice asked or not; undefined for any other answer. */
    private readonly endsAnswer?: (data: string, oneChoice: boolean) => boolean,
    private readonly oneChoice = true,
  ) {
    super(keys, inKeys);
  }

  /** Sends the call, this its handler (undici's Dispatcher, as upstreamCall uses it). */
  dispatch(opts: Dispatcher.DispatchOptions, h: Dispatcher.DispatchHandler): boolean {
    this.h = h;
    return this.agent.dispatch(opts, this);
  }

  /** A stream ends at [DONE]; a chat stream's every event is kept as the last one until then. */
  ends(data: string): boolean {
    if (this.endsAnswer) this.last = data;
    return data === '[DONE]';
  }

  onRequestStart(c: Controller, context: unknown): void {
    this.h.onRequestStart?.(c, context);
  }

  onResponseStart(c: Controller, status: number, headers: Record<string, string | string[]>, message: string): void {
    this.h.onResponseStart?.(c, status, headers, message);
  }

  onResponseData(c: Controller, chunk: Buffer): void {
    if (!this.keys.length) return this.h.onResponseData?.(c, chunk);
    const bytes = this.push(chunk);
    if (bytes.length) this.h.onResponseData?.(c, bytes);
  }

  onResponseEnd(c: Controller, trailers: Record<string, string | string[]>): void {
    const rest = this.end();
    if (rest) this.h.onResponseData?.(c, rest);
    const data = this.last;
    if (this.endsAnswer && data && data !== '[DONE]' && this.endsAnswer(data, this.oneChoice)) this.h.onResponseData?.(c, DONE);
    this.h.onResponseEnd?.(c, trailers);
  }

  onResponseError(c: Controller, err: Error): void {
    this.h.onResponseError?.(c, err);
  }
}
