import { errorTypeFor } from '../http/http.js';
import { ProviderFailure } from '../providers/types.js';
import { isRecord } from '../../internal/shape.js';

/** Why a stream broke after its first content: its words, and the canonical cause the caller's error chunk says (`error_type`). */
export interface StreamBreak {
  words: string;
  cause: string;
}

/** The causes a break keeps (any other is the provider failing: `provider_unavailable`). */
const KEPT = new Set(['rate_limit_exceeded', 'provider_overloaded', 'timeout']);

/** What an upstream's mid-stream error names: its canonical cause (metadata's `error_type`, or its code's). */
export function upstreamCause(error: unknown): string {
  const e = isRecord(error) ? error : {};
  const said = isRecord(e.metadata) ? e.metadata.error_type : undefined;
  const byCode = typeof e.code === 'number' ? errorTypeFor(e.code) : undefined;
  return [said, byCode].find((c): c is string => typeof c === 'string' && KEPT.has(c)) ?? 'provider_unavailable';
}

/** A failure reading the stream (a stall past idle_timeout_ms is a `timeout`). */
export const failureBreak = (failure: ProviderFailure): StreamBreak => ({ words: failure.message, cause: failure.reason === 'timeout' ? 'timeout' : 'provider_unavailable' });

/** What pump() caught: a provider failure as it is, anything else an event it could not use. */
export const caughtFailure = (err: unknown, slug: string): ProviderFailure => (err instanceof ProviderFailure ? err : new ProviderFailure('broken', `${slug}: a stream event that is not a JSON object`));
