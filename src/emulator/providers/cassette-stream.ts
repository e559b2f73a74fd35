import { parsed, type Cassette } from './cassette-format.js';
import { ProviderFailure, type StopSignal, type UpstreamReply } from './types.js';
import { heldChoices, scrubChatChunk } from './chat-scrub.js';
import { scrubResponsesEvent } from './responses-scrub.js';
import { TextScrub, type KeyForm } from './text-scrub.js';

type Body = Record<string, unknown>;

/**
 * A stream (chat, Responses) as it is recorded: each event relayed as it comes, and kept in the
 * cassette with its time since the request; meanwhile each goes to the partial file too (`partial`,
 * cassette-partial.ts), so a gateway killed -9 mid-stream leaves what it had relayed. Kept (`save`)
 * at `[DONE]`, at its end, or where the upstream broke it; not when the caller hung up (`signal`) or
 * the gateway's stop cut it: no answer of the upstream's then. A key split between events (`forms`,
 * keyFormList()) is kept hidden as the relay hides it (text-scrub.ts): the chunks are kept as the caller got them.
 */
export function teeEvents(reply: Extract<UpstreamReply, { kind: 'stream' }>, cassette: Cassette, started: number, save: () => void, partial: { add<T>(event: T): T; end(): void }, signal: StopSignal, forms: readonly KeyForm[] = []): UpstreamReply {
  const chunks: { after_ms: number; data: unknown }[] = (cassette.response.chunks = []);
  const source = reply.events;
  let kept = false;
  const keep = () => kept || ((kept = true), save(), partial.end());
  async function* tee(): AsyncGenerator<string> {
    let lost = false;
    try {
      const scrub = forms.length ? new TextScrub(forms) : undefined;
      let shape: Body | undefined;
      for await (const data of source) {
        const after_ms = Date.now() - started;
        const event = parsed(data);
        if (scrub && event && typeof event === 'object' && !Array.isArray(event)) {
          const body = event as Body;
          if (Array.isArray(body.choices)) scrubChatChunk(scrub, (shape = body));
          else for (const before of scrubResponsesEvent(scrub, body) ?? []) chunks.push(partial.add({ after_ms, data: before }));
        }
        const rest = data === '[DONE]' && scrub && heldChoices(scrub);
        if (rest) chunks.push(partial.add({ after_ms, data: { id: shape?.id, object: 'chat.completion.chunk', created: shape?.created, model: shape?.model, choices: rest } }));
        chunks.push(partial.add({ after_ms, data: event }));
        // Kept at [DONE]: a reader stops there, and this generator may never be resumed.
        if (data === '[DONE]') keep();
        yield data;
      }
    } catch (err) {
      // A caller who hung up, or the gateway stopping, broke it: no answer of the upstream's to keep.
      lost = signal.aborted || (err instanceof ProviderFailure && err.reason === 'stopping');
      cassette.response.broken = (err as Error).message;
      cassette.response.broken_after_ms = Date.now() - started;
      if (err instanceof ProviderFailure && err.reason !== 'broken') cassette.response.broken_reason = err.reason;
      throw err;
    } finally {
      // Also when the relay let it go at an event it could not relay (an error, garbage): replayed, the same happens.
      if (!lost && !signal.aborted) keep();
      partial.end();
    }
  }
  return { ...reply, events: tee() };
}
