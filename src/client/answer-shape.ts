import { ProtocolError } from './errors.js';

/** What an answer must hold for the code that reads it; anything more is the service's own. */
export interface AnswerShape {
  /** What the answer is, in words ("a chat completion"). */
  what: string;
  arrays?: string[];
  strings?: string[];
  objects?: string[];
}

export const SHAPES = {
  chatCompletion: { what: 'a chat completion', arrays: ['choices'] },
  response: { what: 'a response', arrays: ['output'] },
  embeddings: { what: 'a list of embeddings', arrays: ['data'] },
  decision: { what: 'a decision', objects: ['answers'] },
  batch: { what: 'a batch', strings: ['id', 'status'] },
  batchList: { what: 'a list of batches', arrays: ['data'] },
  modelList: { what: 'a list of models', arrays: ['data'] },
} satisfies Record<string, AnswerShape>;

/**
 * Valid JSON of the wrong shape (another server's answer, an API root that is not one) is refused
 * in words, before any reader trips over a missing field.
 */
export function checkShape(data: unknown, shape: AnswerShape): void {
  const record = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  const missing =
    !record
      ? 'is not a JSON object'
      : (shape.arrays?.find((k) => !Array.isArray(record[k])) ?? shape.strings?.find((k) => typeof record[k] !== 'string') ?? shape.objects?.find((k) => !record[k] || typeof record[k] !== 'object'));
  if (missing) throw new ProtocolError(`the service's answer is not ${shape.what}: ${missing === 'is not a JSON object' ? missing : `it has no "${missing}"`}`);
}
