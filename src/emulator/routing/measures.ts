/**
 * What the gateway measured of each (provider, model) from its own attempts, for `provider.sort: "latency" |
 * "throughput"` and `preferred_max_latency / preferred_min_throughput` (measured-order.ts): latency, seconds
 * to the first token (a stream's) or to the whole answer (one not streamed); throughput, completion tokens a
 * second after the first token (over the whole answer when not streamed). A window of the last 100 samples
 * no older than 5 minutes, in memory only (a restart starts unmeasured). A failed attempt is a sample too, the
 * worst of both (latency Infinity, throughput 0): a provider that fails is put after those that answer.
 * Attempts in flight at a (provider, model) with no sample are counted, so that one request at a time, not a
 * burst, is sent first to a provider to measure it (measured-order.ts).
 */

const WINDOW = 100;
const MAX_AGE_MS = 5 * 60_000;

export interface Percentiles {
  p50: number;
  p75: number;
  p90: number;
  p99: number;
}

/** A (provider, model)'s percentiles over its window; `throughput` absent when no attempt counted tokens. */
export interface Measured {
  latency: Percentiles;
  throughput?: Percentiles;
}

interface Sample {
  at: number;
  latency: number;
  /** NaN: no tokens counted. */
  throughput: number;
}

/**
 * A (provider, model)'s samples, and their percentiles once asked (until a sample comes or goes). A ring once
 * full: the oldest at `head`, a new sample written over it (shift() moved the other 99 on every answer).
 */
interface Window {
  samples: Sample[];
  head: number;
  measured?: Measured;
}

export class Measures {
  private readonly windows = new Map<string, Window>();
  /** Attempts in flight at an unmeasured (provider, model), by key. */
  private readonly exploring = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** An answer: `latency` seconds to its first token; `tokens` completion tokens over `generating` seconds after it (none counted: undefined). */
  answered(provider: string, model: string, latency: number, tokens: number | undefined, generating: number): void {
    // A whole answer in one read took no measurable time after its first token: a millisecond at least.
    this.add(provider, model, { at: this.now(), latency, throughput: tokens === undefined ? NaN : tokens / Math.max(generating, 0.001) });
  }

  failed(provider: string, model: string): void {
    this.add(provider, model, { at: this.now(), latency: Infinity, throughput: 0 });
  }

  private add(provider: string, model: string, sample: Sample): void {
    const key = `${provider}\n${model}`;
    let window = this.windows.get(key);
    if (!window) this.windows.set(key, (window = { samples: [], head: 0 }));
    // Measured now: no attempt explores it, one that never ended (a relay that threw) included.
    this.exploring.delete(key);
    if (window.samples.length < WINDOW) window.samples.push(sample);
    else {
      window.samples[window.head] = sample;
      window.head = (window.head + 1) % WINDOW;
    }
    window.measured = undefined;
  }

  /** An attempt begins at an unmeasured (provider, model): counted until `explored`. Whether it was counted. */
  explore(provider: string, model: string): boolean {
    const key = `${provider}\n${model}`;
    if (this.window(key)) return false;
    this.exploring.set(key, (this.exploring.get(key) ?? 0) + 1);
    return true;
  }

  explored(provider: string, model: string): void {
    const key = `${provider}\n${model}`;
    const n = (this.exploring.get(key) ?? 1) - 1;
    if (n > 0) this.exploring.set(key, n);
    else this.exploring.delete(key);
  }

  /** Whether an attempt is in flight at this (provider, model) while it has no sample. */
  beingExplored(provider: string, model: string): boolean {
    return this.exploring.has(`${provider}\n${model}`);
  }

  /** The percentiles of its answers alone (a failure has no latency to show), for the endpoints list; undefined when none answered. */
  shown(provider: string, model: string): Measured | undefined {
    if (!this.of(provider, model)) return undefined;
    const answers = this.windows.get(`${provider}\n${model}`)!.samples.filter((s) => s.latency !== Infinity);
    return answers.length ? measuredOf(answers) : undefined;
  }

  /** The percentiles of a (provider, model) over its window; undefined when it has no sample in it (unmeasured). */
  of(provider: string, model: string): Measured | undefined {
    const window = this.window(`${provider}\n${model}`);
    return window && (window.measured ??= measuredOf(window.samples));
  }

  /** A key's window, its samples past MAX_AGE_MS let go; undefined when none is left. Its percentiles are not made (explore() asks each request). */
  private window(key: string): Window | undefined {
    const window = this.windows.get(key);
    if (!window) return undefined;
    const since = this.now() - MAX_AGE_MS;
    if (window.samples[window.head]!.at < since) {
      // Oldest first again, those too old let go (rare: a provider asked nothing for 5 minutes).
      const { samples, head } = window;
      window.samples = samples.slice(head).concat(samples.slice(0, head)).filter((s) => s.at >= since);
      window.head = 0;
      window.measured = undefined;
    }
    if (!window.samples.length) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }
}

function measuredOf(samples: Sample[]): Measured {
  const latencies = new Float64Array(samples.length);
  const rates = new Float64Array(samples.length);
  let counted = 0;
  for (let i = 0; i < samples.length; i++) {
    latencies[i] = samples[i]!.latency;
    if (!Number.isNaN(samples[i]!.throughput)) rates[counted++] = samples[i]!.throughput;
  }
  const latency = percentiles(latencies);
  return counted ? { latency, throughput: percentiles(rates.subarray(0, counted)) } : { latency };
}

/** Nearest-rank percentiles of the samples (at least one); a typed array sorts by number, Infinity last. */
function percentiles(samples: Float64Array): Percentiles {
  const sorted = samples.sort();
  const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return { p50: at(50), p75: at(75), p90: at(90), p99: at(99) };
}

/** A relayed stream's end as the relays give it (relay.ts): failed before its first token, or answered (whole, its usage). */
interface Relayed {
  failed?: unknown;
  whole?: boolean;
  usage?: unknown;
}

/** One attempt's clock, from the moment its provider is asked; what it came to is added to the measures. */
export class Timing {
  private readonly askedAt = performance.now();
  private firstAt: number | undefined;
  /** Counted as exploring an unmeasured provider until it ends (`end`, or a sample). */
  private exploring: boolean;

  constructor(private readonly measures: Measures, private readonly provider: string, private readonly model: string) {
    this.exploring = measures.explore(provider, model);
  }

  /** The attempt ended without a sample (its caller gone, its request refused): no longer exploring. */
  end(): void {
    if (this.exploring) this.measures.explored(this.provider, this.model);
    this.exploring = false;
  }

  failed(): void {
    this.end();
    this.measures.failed(this.provider, this.model);
  }

  /** A stream's first token came (the relay opens the caller's stream). */
  readonly first = (): void => {
    this.firstAt ??= performance.now();
  };

  /** A whole answer: its time is its latency, and its completion tokens over that time its throughput. */
  whole(usage: unknown): void {
    const seconds = (performance.now() - this.askedAt) / 1000;
    this.end();
    this.measures.answered(this.provider, this.model, seconds, completionTokens(usage), seconds);
  }

  /** A relayed stream: a failure before its first token, else its latency; its throughput when whole. */
  relayed(outcome: Relayed): void {
    if (outcome.failed) return this.failed();
    this.end();
    if (this.firstAt === undefined) return;
    const generating = (performance.now() - this.firstAt) / 1000;
    this.measures.answered(this.provider, this.model, (this.firstAt - this.askedAt) / 1000, outcome.whole ? completionTokens(outcome.usage) : undefined, generating);
  }
}

/** A chat usage's `completion_tokens`, a Responses one's `output_tokens`. */
function completionTokens(usage: unknown): number | undefined {
  const u = usage as { completion_tokens?: unknown; output_tokens?: unknown } | null | undefined;
  const n = u?.completion_tokens ?? u?.output_tokens;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}
