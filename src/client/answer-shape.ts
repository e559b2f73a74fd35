import { ProtocolError } from './errors.js';

/** What a field of an answer must be (`array|string`: either). */
export type FieldKind = 'string' | 'number' | 'object' | 'array' | 'array|string';

/**
 * What an answer must hold for the code that reads it (anything more is the service's own): paths
 * to their kinds, `[]` standing for each element of an array (`data[].embedding`).
 */
export interface AnswerShape {
  /** What the answer is, in words ("a chat completion"). */
  what: string;
  fields: Record<string, FieldKind>;
}

const CHOICES: Record<string, FieldKind> = { choices: 'array', 'choices[]': 'object' };
const BATCH: Record<string, FieldKind> = { id: 'string', status: 'string', request_counts: 'object', 'request_counts.total': 'number', 'request_counts.completed': 'number', 'request_counts.failed': 'number', created_at: 'number' };

export const SHAPES = {
  chatCompletion: { what: 'a chat completion', fields: CHOICES },
  chatChunk: { what: 'a chat completion chunk', fields: CHOICES },
  response: { what: 'a response', fields: { output: 'array', 'output[]': 'object' } },
  responseEvent: { what: 'a Responses stream event', fields: { type: 'string' } },
  embeddings: { what: 'a list of embeddings', fields: { data: 'array', 'data[]': 'object', 'data[].embedding': 'array|string' } },
  decision: { what: 'a decision', fields: { answers: 'object' } },
  batch: { what: 'a batch', fields: BATCH },
  batchList: { what: 'a list of batches', fields: { data: 'array', 'data[]': 'object', ...Object.fromEntries(Object.entries(BATCH).map(([k, v]) => [`data[].${k}`, v])) } },
  modelList: { what: 'a list of models', fields: { data: 'array', 'data[]': 'object', 'data[].id': 'string' } },
  keyInfo: { what: "an API key's details", fields: { data: 'object', 'data.label': 'string', 'data.usage': 'number' } },
  generation: { what: "a generation's details", fields: { data: 'object', 'data.id': 'string', 'data.total_cost': 'number' } },
  generationContent: { what: "a generation's content", fields: { data: 'object', 'data.input': 'object', 'data.output': 'object' } },
  feedback: { what: 'a feedback receipt', fields: { data: 'object' } },
} satisfies Record<string, AnswerShape>;

function isKind(value: unknown, kind: FieldKind): boolean {
  if (kind === 'array') return Array.isArray(value);
  if (kind === 'array|string') return Array.isArray(value) || typeof value === 'string';
  if (kind === 'object') return value !== null && typeof value === 'object' && !Array.isArray(value);
  if (kind === 'number') return typeof value === 'number' && Number.isFinite(value);
  return typeof value === kind;
}

/** The first path of `shape` whose value is missing or of another kind, or undefined. */
function firstMismatch(data: unknown, fields: Record<string, FieldKind>): string | undefined {
  for (const [path, kind] of Object.entries(fields)) {
    // Every value the path reaches: a `[]` step fans out over the array's elements.
    let values: unknown[] = [data];
    for (const step of path.split('.')) {
      const each = step.endsWith('[]');
      const key = each ? step.slice(0, -2) : step;
      values = values.flatMap((v) => {
        const next = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
        return each ? (Array.isArray(next) ? next : []) : [next];
      });
    }
    if (!values.every((v) => isKind(v, kind))) return path;
  }
  return undefined;
}

/**
 * Valid JSON of the wrong shape (another server's answer, an API root that is not one) is refused
 * in words, before any reader trips over a missing field.
 */
export function checkShape(data: unknown, shape: AnswerShape): void {
  if (!isKind(data, 'object')) throw new ProtocolError(`the service's answer is not ${shape.what}: it is not a JSON object`);
  const path = firstMismatch(data, shape.fields);
  if (path) throw new ProtocolError(`the service's answer is not ${shape.what}: "${path}" is missing or not ${/^[aeiou]/.test(shape.fields[path]!) ? 'an' : 'a'} ${shape.fields[path]!.replace('|', ' or ')}`);
}
