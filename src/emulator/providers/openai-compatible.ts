import { Agent, request } from 'undici';
import type { ProviderConfig } from './config.js';
import { ssePayloads } from './sse.js';
import { DEFAULT_MAX_ANSWER_BYTES, headText, textWithin } from './bounded.js';
import { ProviderFailure, passesOver, type AudioReply, type ProviderAdapter, type ProviderModel, type UpstreamChat, type UpstreamReply } from './types.js';

/** Headers of an upstream's answer that a cassette or a log may keep: no cookies, keys or tokens. */
export function publicHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || /cookie|authorization|key|token|secret/i.test(k)) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Why undici gave up, in the words of a provider failure. */
function failureOf(err: unknown, name: string, started: boolean): ProviderFailure {
  if (err instanceof ProviderFailure) return err;
  const code = (err as { code?: string })?.code ?? '';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') return new ProviderFailure('refused', `${name}: connection refused (${code})`);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return new ProviderFailure('timeout', `${name}: timed out`);
  const what = started ? 'stream broken' : 'connection lost';
  return new ProviderFailure('broken', `${name}: ${what} (${code || (err as Error)?.message || String(err)})`);
}

/** A Responses stream has no [DONE]: it ends with its final event. */
const endsResponse = (data: string) => data === '[DONE]' || /"type":\s*"(response\.(completed|incomplete|failed)|error)"/.test(data.slice(0, 80));

/**
 * An upstream that speaks the OpenAI chat API (Ollama, llama.cpp, vLLM, OpenAI, another `router serve`),
 * over undici with keep-alive. The caller's key never goes upstream: only the provider's own.
 */
export class OpenAICompatible implements ProviderAdapter {
  readonly name: string;
  private readonly agent: Agent;
  readonly responses?: (req: UpstreamChat) => Promise<UpstreamReply>;

  constructor(private readonly config: ProviderConfig) {
    this.name = config.name;
    this.agent = new Agent({ headersTimeout: config.timeoutMs, bodyTimeout: config.timeoutMs, connectTimeout: config.timeoutMs });
    if (config.responses) this.responses = (req) => this.post(this.responsesUrl, req, endsResponse);
  }

  models(): ProviderModel[] {
    return this.config.models;
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
    return this.post(this.url, req);
  }

  embeddings(req: UpstreamChat): Promise<UpstreamReply> {
    return this.post(this.embeddingsUrl, { ...req, stream: false });
  }

  /** `POST /audio/speech`: the audio relayed as it comes, never held whole. */
  async speech({ body, signal }: UpstreamChat): Promise<AudioReply> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(this.speechUrl, { method: 'POST', headers, body: JSON.stringify(body), signal, dispatcher: this.agent });
    } catch (err) {
      throw failureOf(err, this.name, false);
    }
    if (passesOver(res.statusCode)) {
      const text = await headText(res.body);
      throw new ProviderFailure('status', `${this.name}: HTTP ${res.statusCode}${text ? ` ${text.slice(0, 200)}` : ''}`, res.statusCode, res.headers['retry-after']?.toString());
    }
    const name = this.name;
    async function* audio(): AsyncGenerator<Buffer> {
      try {
        for await (const piece of res.body) yield piece as Buffer;
      } catch (err) {
        throw failureOf(err, name, true);
      }
    }
    return { status: res.statusCode, headers: publicHeaders(res.headers), audio: audio() };
  }

  private async post(url: string, { body, stream, signal }: UpstreamChat, ends: (data: string) => boolean = (data) => data === '[DONE]'): Promise<UpstreamReply> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(url, { method: 'POST', headers, body: JSON.stringify(body), signal, dispatcher: this.agent });
    } catch (err) {
      throw failureOf(err, this.name, false);
    }
    const status = res.statusCode;
    const kept = publicHeaders(res.headers);
    if (passesOver(status)) {
      const text = await headText(res.body);
      throw new ProviderFailure('status', `${this.name}: HTTP ${status}${text ? ` ${text.slice(0, 200)}` : ''}`, status, res.headers['retry-after']?.toString());
    }
    if (stream && status === 200 && String(kept['content-type'] ?? '').startsWith('text/event-stream')) {
      return { kind: 'stream', status, headers: kept, events: this.events(res.body, ends) };
    }
    try {
      return { kind: 'json', status, headers: kept, text: await textWithin(res.body, this.config.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES, this.name) };
    } catch (err) {
      throw failureOf(err, this.name, false);
    }
  }

  private async *events(body: AsyncIterable<Buffer>, ends: (data: string) => boolean): AsyncGenerator<string> {
    let done = false;
    try {
      for await (const data of ssePayloads(body, this.config.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES)) {
        yield data;
        if (ends(data)) done = true;
      }
    } catch (err) {
      throw failureOf(err, this.name, true);
    }
    if (!done) throw new ProviderFailure('broken', `${this.name}: the stream ended before its end (no [DONE] or final event)`);
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
