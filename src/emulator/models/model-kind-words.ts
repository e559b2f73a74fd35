import type { ModelKind } from './models.js';

const NAMES: Record<ModelKind, string> = { chat: 'a chat model', embedding: 'an embedding model', speech: 'a speech model', decision: 'a decision model' };
const ROUTES: Partial<Record<ModelKind, string>> = { chat: '/v1/chat/completions', embedding: '/v1/embeddings', speech: '/v1/audio/speech' };

/**
 * Why an id names no model of the kind asked, in the words a chat request's list uses for one passed over:
 * no model at all (`… is not a valid model ID`), or a model of another kind, named with the route that serves it.
 */
export function notAModelOfKind(id: string, want: ModelKind, have: ModelKind | undefined): string {
  if (!have || have === want) return `${id} is not a valid model ID`;
  const route = ROUTES[have];
  return `${id} is ${NAMES[have]}, not ${NAMES[want]}${route ? `; ${route} serves it` : ''}`;
}
