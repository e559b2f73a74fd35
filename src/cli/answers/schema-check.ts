/** `--schema JSON|FILE`: the JSON schema an answer must follow (src/kit's), read from the flag and its answer printed. */
import { readTextFile, refuseBlankJson } from '../io/input.js';
import type { IO } from '../io/io.js';
import { answerSchema, checkAnswer, type AnswerSchema } from '../../kit/schema.js';

export { chatResponseFormat, parametersProblem, responsesTextFormat, type AnswerSchema } from '../../kit/schema.js';

/** The schema of --schema: inline JSON when it starts with "{", else a file ("-" for stdin); one ajv cannot compile is refused before sending. */
export async function loadSchema(value: string | undefined, io: IO): Promise<AnswerSchema | undefined> {
  if (value === undefined) return undefined;
  const inline = value.trimStart().startsWith('{');
  const text = inline ? value : await readTextFile('--schema', value, io);
  if (!inline) refuseBlankJson('--schema', value, text);
  return answerSchema(text, inline ? undefined : value);
}

/**
 * Prints an answer that had to follow the schema: valid, as JSON (indented on a terminal, one line
 * when piped); not JSON or not valid, as received, then the kit's SchemaMismatchError (exit 10).
 * With --json (`printed`), the answer was printed whole already: only checked.
 */
export function printSchemaAnswer(io: IO, s: AnswerSchema, text: string, printed = false): void {
  let value: unknown;
  try {
    value = checkAnswer(s, text);
  } catch (err) {
    if (!printed) io.out(text.endsWith('\n') ? text : `${text}\n`);
    throw err;
  }
  if (!printed) io.out(`${JSON.stringify(value, null, io.stdoutTTY ? 2 : undefined)}\n`);
}
