import { parsed, until, type Cassette } from './cassette-format.js';
import { ProviderFailure, type AudioReply, type StopSignal } from './types.js';

/**
 * Speech as it is recorded: the audio relayed as it comes, and kept in the cassette piece by piece
 * (base64, with its time since the request) once whole or broken; meanwhile each piece goes to the
 * partial file too (`partial`, cassette-partial.ts), so a gateway killed -9 mid-answer leaves what it
 * had relayed. A refusal (a 400) is kept as its JSON `body` instead, readable. Audio the caller hung up
 * on (`signal`), or the gateway's stop cut, is not kept, nor is audio let go unread (`return()`).
 */
export function teeAudio(reply: AudioReply, cassette: Cassette, started: number, save: () => void, partial: { add<T>(event: T): T; end(): void }, signal: StopSignal): AudioReply {
  const pieces: { after_ms: number; base64: string }[] = [];
  const ok = reply.status >= 200 && reply.status < 300;
  if (ok) cassette.response.audio = pieces;
  const source = reply.audio;
  async function* audio(): AsyncGenerator<Buffer> {
    const whole: Buffer[] = [];
    try {
      for await (const piece of source) {
        if (ok) pieces.push(partial.add({ after_ms: Date.now() - started, base64: piece.toString('base64') }));
        else whole.push(piece);
        yield piece;
      }
      if (!ok) {
        cassette.response.after_ms = Date.now() - started;
        cassette.response.body = parsed(Buffer.concat(whole).toString('utf8'));
      }
      save();
    } catch (err) {
      // A caller who hung up, or the gateway stopping, cut it: no answer of the upstream's to keep (a
      // cassette is whole or not kept); a break of the upstream's is kept where it came, to break there again.
      if (!signal.aborted && !(err instanceof ProviderFailure && err.reason === 'stopping')) {
        cassette.response.broken = (err as Error).message;
        cassette.response.broken_after_ms = Date.now() - started;
        save();
      }
      throw err;
    } finally {
      // After the whole cassette's write (the partial file goes once it is written), or let go unread: it goes either way.
      partial.end();
    }
  }
  return { ...reply, audio: audio() };
}

/** Recorded speech, as and when it came (times `timing`); a recorded break breaks it there again. */
export function replayAudio(c: Cassette, timing: number, signal: StopSignal, stopping?: StopSignal): AudioReply {
  const started = performance.now();
  const due = (ms: unknown) => started + (typeof ms === 'number' && ms > 0 ? ms * timing : 0);
  const { status, headers, body, audio: pieces, broken, broken_after_ms, after_ms } = c.response;
  // The gateway stopping fails a replay as it fails a live request: a 502 before the first bytes, a cut after.
  const stopped = () => {
    if (stopping?.aborted) throw new ProviderFailure('stopping', `${c.provider}: the gateway is stopping`);
  };
  async function* audio(): AsyncGenerator<Buffer> {
    if (pieces) {
      for (const piece of pieces) {
        await until(due(piece.after_ms), signal, stopping);
        stopped();
        yield Buffer.from(piece.base64, 'base64');
      }
    } else {
      await until(due(after_ms), signal, stopping);
      stopped();
      yield Buffer.from(typeof body === 'string' ? body : JSON.stringify(body ?? null), 'utf8');
    }
    if (broken !== undefined) {
      // The bytes before the break go out first, as they did from the upstream; the break when it came.
      await new Promise((resolve) => setImmediate(resolve));
      await until(due(broken_after_ms), signal, stopping);
      stopped();
      throw new ProviderFailure('broken', broken);
    }
  }
  return { status, headers, audio: audio() };
}
