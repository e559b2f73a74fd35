import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ProviderFailure, type AudioReply, type ProviderAdapter, type ProviderModel, type UpstreamChat, type UpstreamReply } from './types.js';
import { replayAudio, teeAudio } from './cassette-audio.js';
import { parsed, Stopping, type Cassette, type CassetteMode } from './cassette-format.js';
import { failAgain, failed, gone, missed, recordedRefusalHint, replay } from './cassette-replay.js';
import { teeEvents } from './cassette-stream.js';
import { makeDir } from '../../internal/make-dir.js';
import { inOrder, matchKey, takesByRequest, writeCassetteFile, type Endpoint, type Take } from './cassette-folder.js';
import type { FileProvider } from './cassette-shape.js';
import { partialFor, partialLeftovers, scrubbed } from './cassette-partial.js';
import { keyFormList, type KeyForm } from './key-scrub.js';
import { maskAnswer } from './text-scrub.js';

export type { Cassette } from './cassette-format.js';
export { CassetteFileError, lastTakes, ssePayloadsOf } from './cassette-folder.js';

type Body = Record<string, unknown>;

/** `record`: every exchange kept; `replay`: answers from cassettes only; `replay-record`: the missing ones asked and kept. */
export type { CassetteMode } from './cassette-format.js';

type Live = ProviderAdapter & { url?: string; embeddingsUrl?: string; responsesUrl?: string; speechUrl?: string; secret?: string; keyEnv?: string; keyTexts?: string[]; streamForms?: KeyForm[] };
/** The keys a live provider's cassettes are kept without, whole or cut short, and a recorded stream's TextScrub looks for: every configured provider's, in each form, with their open starts (keyFormList). */
const streamFormsOf = (live: Live) => live.streamForms ?? keyFormList([live.secret]);

/** A folder of cassettes: loaded once, grown as exchanges are recorded. */
export class CassetteDeck {
  /** Every request's takes, in the order they are replayed. */
  private readonly byKey: Map<string, Take[]>;
  /** Takes of older runs than a request's newest (a killed `--record`'s leftovers): never replayed; `--record` removes them with its older takes. */
  private readonly stale: Map<string, Take[]>;
  /** How many times each request was replayed (the next take), and recorded, in this run. */
  private readonly played = new Map<string, number>();
  private readonly recorded = new Map<string, number>();
  /** `--record`: the files written in this run, and the requests whose older takes were dropped; the takes it gave (`take\nkey`). */
  private readonly written = new Set<string>();
  private readonly renewed = new Set<string>();
  private readonly named = new Set<string>();
  private readonly stopping = new Stopping();
  /** This run, as its cassettes name it (Cassette.run): when it started, and a few random characters. */
  private readonly run = `${new Date().toISOString()}-${randomBytes(3).toString('hex')}`;
  /**
   * `--record`: failures of a request an older recording holds, kept until this run keeps an answer
   * of it (or stops): written at once, the first would take the older take 1's file name, and a run
   * killed while it retried would leave the failure alone in place of the older answer.
   */
  private readonly failuresHeld = new Map<string, (() => void)[]>();
  /** The cassettes still to write, one after another (a later one of the same file after the earlier). */
  private writes: Promise<void> = Promise.resolve();

  /**
   * `timing` scales the recorded waits on replay: 1 as recorded, 0.5 half as long, 0 none. A replayed
   * chunk is never sent before its recorded time (times `timing`) since the request.
   */
  constructor(
    private readonly dir: string,
    readonly mode: CassetteMode,
    private readonly timing = 1,
    /** The providers file's providers: a cassette of another, or of an endpoint its provider does not serve, is refused. */
    providers?: readonly FileProvider[],
  ) {
    // Not node's recursive mkdir: under /proc it spins for ever (node 20).
    makeDir(dir, 0o777);
    partialLeftovers(dir, mode);
    ({ byKey: this.byKey, stale: this.stale } = takesByRequest(dir, providers));
  }

  /** The gateway stops: replays under way end with its failure (a stream with the error chunk), as live ones do. */
  stop(): void {
    this.stopping.stop();
  }

  /**
   * The take of this request to replay now: each in turn, then the last again. With
   * `--record-missing`, a last take that is a failure is not repeated, and a failure it kept itself
   * (`record_missing`) is not replayed at all: the upstream is asked again (undefined), and what it
   * gives kept as the next take, in place of that failure.
   */
  private next(key: string): Take | undefined {
    const all = this.byKey.get(key);
    if (!all?.length) return undefined;
    const takes = this.mode === 'replay-record' ? all.filter((t) => !t.cassette.record_missing) : all;
    const n = this.played.get(key) ?? 0;
    if (this.mode === 'replay-record' && n >= takes.length && (!takes.length || failed(takes.at(-1)!.cassette))) {
      const gap = all.find((t) => this.filledBefore(t));
      this.recorded.set(key, gap ? (gap.cassette.take ?? 1) - 1 : Math.max(this.recorded.get(key) ?? 0, Math.max(...all.map((t) => t.cassette.take ?? 1))));
      return undefined;
    }
    this.played.set(key, n + 1);
    return takes[Math.min(n, takes.length - 1)]!;
  }

  /** A failure take replayed: a 401's or 403's words name its file and the key to check (cassette-replay.ts). */
  private failAgain(live: Live, { file, cassette }: Take, req: UpstreamChat): Promise<never> {
    return failAgain(cassette, this.timing, req.signal, this.stopping, recordedRefusalHint(live.name, live.keyEnv, join(this.dir, file), cassette.record_missing));
  }

  /** Resolves once every cassette kept so far is on disk, those kept while it waits too (the gateway waits for it when it stops). */
  async flush(): Promise<void> {
    // The run stops: failures held for an answer that never came are what it recorded.
    for (const held of this.failuresHeld.values()) for (const save of held.splice(0)) save();
    for (let writes = this.writes; ; writes = this.writes) {
      await writes;
      if (writes === this.writes) return;
    }
  }

  /** Resolves once the cassettes kept so far are on disk (not those kept meanwhile): a batch's result is written after its exchange's. */
  allKept = (): Promise<void> => this.writes;

  /**
   * Writes a cassette off the event loop, in turn after those before it: to a temp file, then renamed,
   * so the file is whole or absent (a kill leaves at most a `.json.<pid>.tmp`, never read). A write that
   * fails (a full disk) is said on stderr; the answer it recorded was delivered all the same.
   */
  private write(path: string, text: string): void {
    this.writes = this.writes.then(() => writeCassetteFile(path, text));
  }

  /**
   * A request's takes once one of this run is kept: with `--record`, those of an older recording go
   * (their files removed, in turn with the writes), so a longer older run leaves no extra takes behind
   * the new ones. `--record-missing` keeps them: its takes come after.
   */
  private renew(key: string): Take[] {
    const takes = this.byKey.get(key) ?? [];
    if (this.mode !== 'record' || this.renewed.has(key)) return takes;
    this.renewed.add(key);
    const older = [...takes, ...(this.stale.get(key) ?? [])].filter((t) => !this.written.has(t.file));
    for (const { file } of older) this.remove(file, 'older cassette');
    return takes.filter((t) => this.written.has(t.file));
  }

  /** A cassette file removed, in turn with the writes. */
  private remove(file: string, what: string): void {
    this.writes = this.writes.then(() => rm(join(this.dir, file), { force: true }).catch((err: Error) => void process.stderr.write(`record: ${what} ${file} not removed: ${err.message}\n`)));
  }

  /** `--record-missing`: whether a take is a failure an earlier run of it kept (this run's failures and answers make a retry sequence). */
  private filledBefore(t: Take): boolean {
    return this.mode === 'replay-record' && !!t.cassette.record_missing && !this.written.has(t.file);
  }

  /** filledBefore(), the take then let go: this run's new take replaces it (its file removed, unless written over). */
  private filled(t: Take): boolean {
    return this.filledBefore(t) && (this.remove(t.file, 'cassette'), true);
  }

  /** Whether this request's next cassette would replace an older recording of it (`--record`, its first of this run). */
  private replacing(key: string): boolean {
    return this.mode === 'record' && !this.renewed.has(key) && (this.byKey.get(key) ?? []).some((t) => !this.written.has(t.file));
  }

  /** The adapter as this deck's mode has it: recording behind it, or answering for it. */
  wrap(live: Live): ProviderAdapter {
    return {
      name: live.name,
      models: (): ProviderModel[] => live.models(),
      chat: (req: UpstreamChat) => this.chat(live, req, 'chat'),
      embeddings: live.embeddings ? (req: UpstreamChat) => this.chat(live, req, 'embeddings') : undefined,
      responses: live.responses ? (req: UpstreamChat) => this.chat(live, req, 'responses') : undefined,
      speech: live.speech ? (req: UpstreamChat) => this.speech(live, req) : undefined,
    };
  }

  private async speech(live: Live, req: UpstreamChat): Promise<AudioReply> {
    const key = matchKey(live.name, req.body, 'speech');
    if (this.mode !== 'record') {
      gone(live.name, req.signal);
      const found = this.next(key);
      if (found && failed(found.cassette)) return this.failAgain(live, found, req);
      if (found) return replayAudio(found.cassette, this.timing, req.signal, this.stopping);
      if (this.mode === 'replay') throw this.miss(live.name, req.body);
    }
    const started = Date.now();
    const reply = await this.asked(live, req, key, 'speech', started, () => live.speech!(req));
    const { cassette, save, file } = this.blank(live, req, key, 'speech', reply, started);
    return teeAudio(reply, cassette, started, save, this.partialOf(live, file, cassette, 'audio'), req.signal);
  }
  private partialOf = (live: Live, file: string, c: Cassette, field: 'chunks' | 'audio') => partialFor(this.dir, file, c, field, (t) => scrubbed(streamFormsOf(live), t), (end) => (this.writes = this.writes.then(end)));

  private async chat(live: Live, req: UpstreamChat, endpoint: Endpoint): Promise<UpstreamReply> {
    const key = matchKey(live.name, req.body, endpoint);
    if (this.mode !== 'record') {
      gone(live.name, req.signal);
      const found = this.next(key);
      if (found && failed(found.cassette)) return this.failAgain(live, found, req);
      if (found) return replay(found.cassette, this.timing, req.signal, this.stopping);
      if (this.mode === 'replay') throw this.miss(live.name, req.body);
    }
    return this.record(live, req, key, endpoint);
  }

  /** A request no cassette holds (cassette-replay.ts missed()). */
  private miss(provider: string, body: Body): ProviderFailure {
    return missed(this.dir, this.byKey.values(), provider, body);
  }

  /** A cassette of this exchange, its answer still to come, and how it is kept (saved, and answering from then on). */
  private blank(live: Live, req: UpstreamChat, key: string, endpoint: Endpoint, reply: { status: number; headers: Record<string, string> }, started: number): { cassette: Cassette; save: () => void; file: string } {
    const url = { chat: live.url, embeddings: live.embeddingsUrl, responses: live.responsesUrl, speech: live.speechUrl }[endpoint];
    // --record-missing adds takes to the run it found, so they are replayed with its takes.
    const run = this.mode === 'record' || !this.byKey.get(key)?.length ? this.run : this.byKey.get(key)![0]!.cassette.run;
    // The n-th exchange of one request in this run is its n-th take (a retry's answer beside the error's), never one given before.
    let take = this.recorded.get(key) ?? 0;
    while (this.named.has(`${++take}\n${key}`));
    this.recorded.set(key, take);
    this.named.add(`${take}\n${key}`);
    const cassette: Cassette = {
      provider: live.name,
      recorded_at: new Date(started).toISOString(),
      ...(run === undefined ? {} : { run }), ...(endpoint === 'chat' ? {} : { endpoint }),
      request: { method: 'POST', url: url ?? '', headers: { 'content-type': 'application/json' }, body: req.body },
      response: { status: reply.status, headers: reply.headers },
      ...(take > 1 ? { take } : {}),
    };
    const file = `${live.name}-${String(req.body.model).replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60)}-${key.slice(0, 12)}${take > 1 ? `-${take}` : ''}.json`;
    const save = () => {
      this.write(join(this.dir, file), scrubbed(streamFormsOf(live), `${JSON.stringify(cassette, null, 2)}\n`));
      this.written.add(file);
      // Failures held until an answer came are this request's earlier takes, written after it: the
      // first takes the older take 1's file, so a run killed between would leave it alone in place of
      // the older answer; the other way round, the answer (the newest run's) is replayed.
      for (const held of this.failuresHeld.get(key)?.splice(0) ?? []) held();
      this.byKey.set(key, [...this.renew(key).filter((t) => t.file !== file && !this.filled(t)), { file, cassette }].sort(inOrder));
      // `--record-missing`: a take this run asked for was its answer, not one to replay back to it.
      if (this.mode === 'replay-record') this.played.set(key, this.byKey.get(key)!.length);
    };
    return { cassette, save, file };
  }

  /**
   * The upstream asked: a failure it gives that the gateway passes over (refused, timed out, a 429 or
   * 5xx, no answer) is kept as this request's next take too, so replay fails there as recording did
   * (a retry after a 503 replays the 503, then the answer). Not one of a caller who hung up, nor the
   * gateway's stop: no answer of the upstream's. Nor, with `--record-missing`, one with no HTTP answer
   * (refused, a connect or head timeout): that fills a recording's gaps, and an outage of the network
   * would otherwise be replayed as the request's first answer ever after.
   */
  private async asked<T>(live: Live, req: UpstreamChat, key: string, endpoint: Endpoint, started: number, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      const unanswered = this.mode === 'replay-record' && !(err instanceof ProviderFailure && err.status);
      if (err instanceof ProviderFailure && err.reason !== 'stopping' && !req.signal.aborted && !unanswered) {
        const { cassette, save } = this.blank(live, req, key, endpoint, { status: err.status ?? 0, headers: {} }, started);
        cassette.response.after_ms = Date.now() - started;
        cassette.response.failure = { reason: err.reason, message: err.message, ...(err.retryAfter === undefined ? {} : { retry_after: err.retryAfter }), ...(err.errorType === undefined ? {} : { error_type: err.errorType }) };
        if (this.mode === 'replay-record') cassette.record_missing = true;
        if (this.replacing(key)) this.failuresHeld.set(key, [...(this.failuresHeld.get(key) ?? []), save]);
        else save();
      }
      throw err;
    }
  }

  private async record(live: Live, req: UpstreamChat, key: string, endpoint: Endpoint): Promise<UpstreamReply> {
    const started = Date.now();
    const reply = await this.asked(live, req, key, endpoint, started, () => (endpoint === 'embeddings' ? live.embeddings!(req) : endpoint === 'responses' ? live.responses!(req) : live.chat(req)));
    const { cassette, save, file } = this.blank(live, req, key, endpoint, reply, started);
    if (reply.kind === 'json') {
      cassette.response.after_ms = Date.now() - started;
      // Its strings and names as a whole answer's (a key split between a member's name and its value too), before the text's search.
      cassette.response.body = maskAnswer(parsed(reply.text), streamFormsOf(live));
      save();
      return reply;
    }
    return teeEvents(reply, cassette, started, save, this.partialOf(live, file, cassette, 'chunks'), req.signal, streamFormsOf(live));
  }
}
