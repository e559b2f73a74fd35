/** What `--router-metadata` prints to stderr: the summary, then the attempts and the pipeline when the answer has them. */
import { routingMetadata } from '../../client/types.js';
import type { IO } from '../io/io.js';

export function noteRouting(io: IO, answer: { router_metadata?: unknown; openrouter_metadata?: unknown } | null | undefined): boolean {
  const m = routingMetadata(answer);
  if (!m) return false;
  io.note(`router: ${String(m.summary)}`);
  const attempts = Array.isArray(m.attempts) ? m.attempts : [];
  if (attempts.length) io.note(`router: attempts: ${attempts.map((a) => `${String(a.model)} via ${String(a.provider)} (${String(a.status)})`).join(', ')}`);
  const pipeline = Array.isArray(m.pipeline) ? m.pipeline : [];
  if (pipeline.length) io.note(`router: pipeline: ${pipeline.map((s) => `${String(s.type)} ${String(s.name)}${s.summary ? `: ${String(s.summary)}` : ''}`).join('; ')}`);
  return true;
}
