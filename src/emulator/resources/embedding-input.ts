/** The input of an embeddings request, checked (apart from the rest of the resource: the batch rules use it too). */
import { bad } from '../http/validate.js';
import { HttpError } from '../http/http.js';

type Body = Record<string, unknown>;

/** The texts of an input; `strict` (a batch's): strings and token ids only. */
export function inputsOf(input: unknown, strict: boolean): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input)) {
    if (input.length === 0) bad('input must not be empty');
    if (input.every((x) => typeof x === 'number')) return [JSON.stringify(input)];
    return input.map((item, i) => {
      if (typeof item === 'string') return item;
      if (Array.isArray(item) && item.every((x) => typeof x === 'number')) return JSON.stringify(item);
      if (!strict && item && typeof item === 'object') return JSON.stringify(item);
      return bad(`input[${i}] must be a string or an array of token ids`);
    });
  }
  return bad('input is required: a string, an array of strings or token arrays');
}

/** What an embeddings request of a batch may not have (deployment notes): input_type, provider, inputs other than strings or token ids. */
export function batchEmbeddingsProblem(body: Body): string | undefined {
  const own = ['input_type', 'provider'].find((k) => body[k] !== undefined);
  if (own) return `${own} is not supported in batches`;
  if (body.input === undefined) return undefined;
  try {
    inputsOf(body.input, true);
  } catch (err) {
    if (err instanceof HttpError) return err.message;
    throw err;
  }
  return undefined;
}
