import type { Ctx } from '../http/http.js';
import { drainOrClose } from '../state/billing.js';
import type { ProviderFailure } from '../providers/types.js';
import { caughtFailure } from './stream-break.js';
import type { UpstreamEvents } from '../providers/upstream-events.js';

/**
 * The relay's pump() over an upstream's own events, the same steps: writes what `take()` gives, then
 * hands the events queued since to `relayed` until it says the stream is over, the upstream ends or
 * breaks, or the caller goes. Woken by UpstreamEvents.poll's callback when a network read brought some,
 * not by a promise: next() made one a read, with its resolvers, a waiter and a result object (~1 KB
 * a streamed request). One promise a stream.
 */
export function pumpEvents(res: Ctx['res'], closed: () => boolean, events: UpstreamEvents, slug: string, take: () => Buffer | undefined, relayed: (data: string) => boolean): Promise<ProviderFailure | undefined> {
  return new Promise((resolve) => {
    const step = (): void => {
      try {
        for (;;) {
          const out = take();
          // A response already closed says so no more: its drain would be waited for ever.
          if (out && !res.write(out) && !res.destroyed) return void drainOrClose(res).then(step);
          const now = events.poll(step);
          if (now === 'waiting') return;
          if (now === 'ended' || closed() || events.eachQueued(relayed)) return resolve(undefined);
        }
      } catch (err) {
        resolve(caughtFailure(err, slug));
      }
    };
    step();
  });
}
