/** What `--router-metadata` prints to stderr: the summary, then the attempts and the pipeline when the answer has them. */
import { routingMetadata } from '../../client/types.js';
import type { IO } from '../io/io.js';

export function noteRouting(io: IO, answer: { router_metadata?: unknown; openrouter_metadata?: unknown } | null | undefined): boolean {
  const m = routingMetadata(answer);
  if (!m) return false;
  io.note(`router: ${String(m.summary)}`);
  const attempts = Array.isArray(m.attempts) ? m.attempts : [];
  if (attempts.length) io.note(`router: attempts: ${attempts.map((a) => `${String(a.model)} via ${String(a.provider)} (${String(a.status)})`).join(', ')}`);
  const passedOver = listOf(answer?.router_metadata, 'passed_over');
  if (passedOver.length) io.note(`router: passed over, not asked: ${passedOver.map((p) => `${String(p.model)} via ${String(p.provider)} (${String(p.status)})`).join(', ')}`);
  const pipeline = Array.isArray(m.pipeline) ? m.pipeline : [];
  if (pipeline.length) io.note(`router: pipeline: ${pipeline.map((s) => `${String(s.type)} ${String(s.name)}${s.summary ? `: ${String(s.summary)}` : ''}`).join('; ')}`);
  return true;
}

/**
 * An error answer's routing metadata (a gateway's failure, asked with --router-metadata): one line each
 * provider tried, and why it failed when the metadata says (`router_metadata`'s `error`; the deployed
 * shape's `status`). Under either name, as both are when both were asked: the words of the richer one.
 * `message` is the error's own line: the attempts' words it repeats are said once, in their lines.
 */
export function failedAttempts(body: unknown, message: string): { message: string; lines: string[] } {
  if (!body || typeof body !== 'object') return { message, lines: [] };
  const { router_metadata: router, openrouter_metadata: openrouter } = body as Record<string, unknown>;
  const words = attemptsOf(router);
  const statuses = attemptsOf(openrouter);
  const attempts = words.length ? words : statuses;
  const lines = attempts.map((a, i) => {
    const why = typeof a.error === 'string' ? `: ${a.error}` : typeof (statuses[i] ?? a).status === 'number' ? ` (${String((statuses[i] ?? a).status)})` : '';
    return `router: attempt ${i + 1}: ${String(a.model)} via ${String(a.provider)} ${a.ok === true || (statuses[i] ?? a).status === 200 ? 'answered' : 'failed'}${why}`;
  });
  // Those never asked (router_metadata's passed_over: an id that names no model, a provider a rule passed over), after.
  const passedOver = listOf(router, 'passed_over').map((p): Record<string, unknown> => ({ ...p, error: p.reason }));
  for (const p of passedOver) lines.push(`router: passed over: ${String(p.model)} via ${String(p.provider)}${typeof p.error === 'string' ? `: ${p.error}` : ''}`);
  return { message: withoutAttempts(message, [...attempts, ...passedOver]), lines };
}

/** The error's line cut before the first attempt's words when it holds every failed attempt's words (a gateway's 502 names them all). */
function withoutAttempts(message: string, attempts: Record<string, unknown>[]): string {
  const failed = attempts.filter((a) => a.ok !== true && typeof a.error === 'string' && a.error);
  const at = failed.map((a) => message.indexOf(a.error as string));
  if (!failed.length || at.some((i) => i < 0)) return message;
  const head = message.slice(0, Math.min(...at)).replace(/[\s:;,]+$/, '');
  return head ? `${head} (${failed.length === 1 ? 'the attempt' : `${failed.length} attempts`} below)` : message;
}

const attemptsOf = (m: unknown) => listOf(m, 'attempts');

function listOf(m: unknown, field: 'attempts' | 'passed_over'): Record<string, unknown>[] {
  const list = m && typeof m === 'object' ? (m as Record<string, unknown>)[field] : undefined;
  return Array.isArray(list) ? list.filter((a): a is Record<string, unknown> => !!a && typeof a === 'object') : [];
}
