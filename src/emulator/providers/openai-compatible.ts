import { viaHeader } from '../http/loop-guard.js';
import { request, type Dispatcher } from 'undici';
import type { ProviderConfig } from './config.js';
import { failureOf, publicHeaders, upstreamCall } from './upstream-call.js';
import { answerText, DEFAULT_MAX_ANSWER_BYTES, headBytes, headText, keyHint, statusFailure } from './bounded.js';
import { CODED_ERROR_BYTES } from './coded-refusal.js';
import { ProviderFailure, passesOver, type AudioReply, type EndRule, type ProviderAdapter, type ProviderModel, type UpstreamChat, type UpstreamReply } from './types.js';
import { firstWords } from '../../internal/first-words.js';
import { KEEP_ALIVE } from '../../internal/keep-alive.js';
import { OriginPools } from './origin-pools.js';
import { bytesOf, keyFormList, type KeyForm } from './key-scrub.js';
import { AnswerRelay } from './answer-relay.js';
import { cutText } from '../../internal/first-words.js';

/** A Responses stream has no [DONE]: it ends with its final event. */
const RESPONSE_END: EndRule = { ends: (data) => data === '[DONE]' || /"type":\s*"(response\.(completed|incomplete|failed)|error)"/.test(data.slice(0, 80)) };
/** Any other stream ends at [DONE]. */
const DONE_END: EndRule = { ends: (data) => data === '[DONE]' };

/** What a JSON answer starts with (past any white space): an object, or a list. */
const JSON_START = /^\s*[{[]/;

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A 2xx speech answer of these types is a page or an error, not audio (an SSE stream of audio is audio). */
const NOT_AUDIO = /^\s*(text\/html|application\/json)/i;

/**
 * A whole answer that is not what the API answers, said as what it is (undefined when it is one): a
 * redirect (undici follows none) and where to; a page or body that is not `expected` (a web UI's, at
 * a base_url without its /v1), with its status and type.
 */
function notTheApi(name: string, status: number, headers: Record<string, string>, text: string, expected: 'JSON' | 'audio'): ProviderFailure | undefined {
  if (status >= 300 && status < 400) {
    const to = headers.location ? ` to ${headers.location}` : '';
    return new ProviderFailure('status', `${name}: HTTP ${status}, redirected${to}: base_url must be where the API answers (redirects are not followed)`, status);
  }
  if (expected === 'JSON' && (JSON_START.test(text) || isJson(text))) return undefined;
  const type = headers['content-type']?.split(';')[0] || 'no content-type';
  const words = firstWords(text, 80);
  // A server that streams whatever it is asked is the API all the same: base_url is not what to check.
  const streamed = type === 'text/event-stream' ? ': it streamed, though the request asked for a whole answer (stream false or unset)' : undefined;
  const hint = status >= 200 && status < 300 ? (streamed ?? ": is base_url the API's (for Ollama, vLLM and OpenAI it ends in /v1)?") : '';
  return new ProviderFailure('status', `${name}: HTTP ${status} ${type}, not ${expected}${words ? ` (${words})` : ''}${hint}`, status);
}

/**
 * An answer in a content-coding (gzip, br, …): the gateway asks for none (`accept-encoding: identity`)
 * and reads bytes as they come, so one sent anyway is passed over in words, not read as garbled text.
 */
function coded(name: string, headers: Record<string, string>): ProviderFailure | undefined {
  const coding = headers['content-encoding']?.trim().toLowerCase();
  if (!coding || coding === 'identity') return undefined;
  return new ProviderFailure('broken', `${name}: an answer in content-encoding ${cutText(coding, 40)}, though none was asked for (accept-encoding: identity)`);
}

/** The first character of member `name`'s value in a JSON text (0 when it has none): `"` a string, `{` an object. */
function valueStart(data: string, name: string): number {
  const at = data.indexOf(name);
  if (at < 0) return 0;
  let i = at + name.length;
  while (data.charCodeAt(i) === 32 || data.charCodeAt(i) === 58 /* : */) i++;
  return data.charCodeAt(i);
}

/** Whether a chat stream's last event ends it: the usage chunk (usage is always asked), or, one choice asked, its finish_reason. */
const endsAnswer = (data: string, oneChoice: boolean) => valueStart(data, '"usage"') === 123 /* { */ || (oneChoice && valueStart(data, '"finish_reason"') === 34) /* " */;

/**
 * An upstream that speaks the OpenAI chat API (Ollama, llama.cpp, vLLM, OpenAI, another `router serve`),
 * over undici with keep-alive. The caller's key never goes upstream: only the provider's own.
 */
export class OpenAICompatible implements ProviderAdapter {
  readonly name: string;
  private readonly agent: OriginPools;
  /** The provider keys hidden in what chat, embeddings and Responses answer (answer-relay.ts), and their bytes' table. */
  private readonly keys: Buffer[];
  /** Those keys as text, in each form (keyTexts): a cassette of this provider is kept without them. */
  readonly keyTexts: string[];
  /** Those forms with their open starts (keyFormList): a recorded stream's TextScrub looks for them. */
  readonly streamForms: KeyForm[];
  private readonly inKeys: Uint8Array;
  /** Each URL posted to, as undici is given it; and the headers of a stream's call and of a whole answer's: made once, not per request. */
  private readonly targets = new Map<string, { origin: string; path: string }>();
  private readonly headers: Record<'stream' | 'whole', Record<string, string>>;
  readonly responses?: (req: UpstreamChat) => Promise<UpstreamReply>;
  private readonly keyHint: string;

  /**
   * `keys`: every configured provider's key, hidden in what this one answers (key-scrub.ts); its own by default.
   * `via`: the gateway's own name, sent in each request's `Via` header (http/loop-guard.ts); none for a drift check.
   */
  constructor(
    private readonly config: ProviderConfig,
    keys: readonly (string | undefined)[] = [config.apiKey],
    private readonly via?: string,
  ) {
    this.name = config.name;
    this.keyHint = keyHint(config);
    this.agent = new OriginPools({ ...KEEP_ALIVE, headersTimeout: config.timeoutMs, bodyTimeout: config.timeoutMs, connectTimeout: config.timeoutMs });
    this.streamForms = keyFormList(keys);
    this.keyTexts = this.streamForms.map((form) => form.text);
    this.keys = this.keyTexts.map((k) => Buffer.from(k));
    this.inKeys = bytesOf(this.keys);
    if (config.responses) this.responses = (req) => this.post(this.responsesUrl, req, RESPONSE_END);
    const headers = (accept: string): Record<string, string> => ({ 'content-type': 'application/json', accept, 'accept-encoding': 'identity', ...(config.apiKey && { authorization: `Bearer ${config.apiKey}` }), ...(via && { via: viaHeader(via) }) });
    this.headers = { stream: Object.freeze(headers('text/event-stream')), whole: Object.freeze(headers('application/json')) };
  }

  models(): ProviderModel[] {
    return this.config.models;
  }

  /** The key this provider is sent: what it writes back is kept (cassettes) without it. */
  get secret(): string | undefined {
    return this.config.apiKey;
  }

  /** The variable its key comes from (a replayed 401 or 403 names it). */
  get keyEnv(): string | undefined {
    return this.config.keyEnv;
  }

  get url(): string {
    return `${this.config.baseUrl}/chat/completions`;
  }

  get embeddingsUrl(): string {
    return `${this.config.baseUrl}/embeddings`;
  }

  get speechUrl(): string {
    return `${this.config.baseUrl}/audio/speech`;
  }

  get responsesUrl(): string {
    return `${this.config.baseUrl}/responses`;
  }

  chat(req: UpstreamChat): Promise<UpstreamReply> {
    if (!req.stream) return this.post(this.url, req);
    const n = req.body.n;
    const relay = new AnswerRelay(this.agent, this.keys, this.inKeys, endsAnswer, n === undefined || n === null || n === 1);
    return this.post(this.url, req, relay, relay);
  }

  embeddings(req: UpstreamChat): Promise<UpstreamReply> {
    return this.post(this.embeddingsUrl, { ...req, stream: false });
  }

  /** The headers of a call: made once, but for a request that came through other gateways (their names before this one's in `Via`). */
  private headersFor(stream: boolean, via: string | undefined): Record<string, string> {
    const made = stream ? this.headers.stream : this.headers.whole;
    return via && this.via ? { ...made, via: this.viaAfter(via) } : made;
  }

  /** This gateway's `Via`, after the gateways the request came through. */
  private viaAfter(before: string | undefined): string {
    return before ? `${before}, ${viaHeader(this.via!)}` : viaHeader(this.via!);
  }

  /** `POST /audio/speech`: the audio relayed as it comes, never held whole. */
  async speech({ body, signal, via }: UpstreamChat): Promise<AudioReply> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'accept-encoding': 'identity' };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    if (this.via) headers.via = this.viaAfter(via);
    let res: Awaited<ReturnType<typeof request>>;
    try {
      // The format by name (cassettes key on the caller's body): an upstream's default may not be the spec's pcm (OpenAI's is mp3).
      res = await request(this.speechUrl, { method: 'POST', headers, body: JSON.stringify({ ...body, response_format: body.response_format ?? 'pcm' }), signal, dispatcher: this.agent });
    } catch (err) {
      throw failureOf(err, this.name, false, this.config.timeoutMs);
    }
    const kept = publicHeaders(res.headers);
    // An error answer in a content-coding (gzip, deflate, br) is decoded for its words, as chat's (coded-refusal.ts).
    const codedError = res.statusCode >= 400 && !!coded(this.name, kept);
    const errorText = async () => (codedError ? answerText(res.statusCode, kept, await headBytes(res.body, CODED_ERROR_BYTES + 1)) : headText(res.body));
    if (passesOver(res.statusCode)) {
      throw statusFailure(this.name, res.statusCode, await errorText(), res.headers['retry-after']?.toString(), this.keyHint);
    }
    if (codedError) {
      const text = await errorText();
      // Decoded: relayed as the caller's refusal; left coded (too large, another coding): passed over below.
      if (!kept['content-encoding']) return { status: res.statusCode, headers: kept, audio: (async function* () {
        yield Buffer.from(text);
      })() };
      throw coded(this.name, kept)!;
    }
    const encoded = coded(this.name, kept);
    if (encoded) {
      res.body.destroy();
      throw encoded;
    }
    const type = String(res.headers['content-type'] ?? '');
    if ((res.statusCode >= 300 && res.statusCode < 400) || (res.statusCode < 300 && NOT_AUDIO.test(type))) {
      throw notTheApi(this.name, res.statusCode, publicHeaders(res.headers), await headText(res.body), 'audio')!;
    }
    const { name, config } = this;
    async function* audio(): AsyncGenerator<Buffer> {
      try {
        for await (const piece of res.body) yield piece as Buffer;
      } catch (err) {
        throw failureOf(err, name, true, config.timeoutMs);
      }
    }
    return { status: res.statusCode, headers: publicHeaders(res.headers), audio: audio() };
  }

  /** `agent`: what the call goes through; by default the pools, or a relay hiding the keys when there are some (answer-relay.ts). */
  private post(url: string, { body, stream, signal, via }: UpstreamChat, ends: EndRule = DONE_END, agent: Pick<Dispatcher, 'dispatch'> = this.keys.length ? new AnswerRelay(this.agent, this.keys, this.inKeys) : this.agent): Promise<UpstreamReply> {
    let target = this.targets.get(url);
    if (!target) {
      const parsed = new URL(url);
      this.targets.set(url, (target = { origin: parsed.origin, path: parsed.pathname + parsed.search }));
    }
    const maxAnswer = this.config.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
    return upstreamCall(agent, { origin: target.origin, path: target.path, headers: this.headersFor(stream, via), body: JSON.stringify(body), signal, name: this.name, keyHint: this.keyHint, stream, ends, maxAnswer, timeoutMs: this.config.timeoutMs, firstEventMs: this.config.firstEventMs, idleMs: this.config.idleMs, responses: ends === RESPONSE_END }).then(this.noAnswer);
  }

  /** A whole answer that is no API's answer (notTheApi), or any answer in a content-coding, fails the provider in words. */
  private readonly noAnswer = (reply: UpstreamReply): UpstreamReply => {
    const encoded = coded(this.name, reply.headers);
    if (encoded) {
      if (reply.kind === 'stream') void reply.events[Symbol.asyncIterator]().return?.();
      throw encoded;
    }
    if (reply.kind !== 'json') return reply;
    const failure = notTheApi(this.name, reply.status, reply.headers, reply.text, 'JSON');
    if (failure) throw failure;
    return reply;
  };

  /** Lets every request in flight go at once (a stream relayed ends with the error chunk), not after its timeout_ms. */
  close(): Promise<void> {
    return this.agent.destroy(new ProviderFailure('stopping', `${this.name}: the gateway is stopping`));
  }
}
