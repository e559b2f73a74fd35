/** `--schema JSON|FILE`: the JSON schema an answer must follow, sent as the service's format and checked locally with ajv. */
import { CliError, EXIT, usage } from '../exit-codes.js';
import { readTextFile } from '../io/input.js';
import type { IO } from '../io/io.js';

type Validate = ((value: unknown) => boolean) & { errors?: { instancePath: string; message?: string }[] | null };

export interface AnswerSchema {
  name: string;
  schema: Record<string, unknown>;
  validate: Validate;
}

/** Reads the schema (inline JSON when it starts with "{", else a file, "-" for stdin) and compiles it: a schema ajv cannot compile is refused before sending. */
export async function loadSchema(value: string | undefined, io: IO): Promise<AnswerSchema | undefined> {
  if (value === undefined) return undefined;
  const inline = value.trimStart().startsWith('{');
  const text = inline ? value : await readTextFile('--schema', value, io);
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw usage(`--schema: ${inline ? 'the value' : value} is not valid JSON (${(err as Error).message})`);
  }
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) throw usage('--schema must be a JSON schema object');
  let validate: Validate;
  try {
    validate = await compile(schema as Record<string, unknown>);
  } catch (err) {
    throw usage(`--schema: not a valid JSON schema (${(err as Error).message})`);
  }
  const title = typeof (schema as { title?: unknown }).title === 'string' ? (schema as { title: string }).title : '';
  const name = title.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64) || 'answer';
  return { name, schema: schema as Record<string, unknown>, validate };
}

async function compile(schema: Record<string, unknown>): Promise<Validate> {
  const ajv = await import('ajv');
  // CommonJS seen from ESM: the class is the default export's default.
  const Ajv = ((ajv.default as unknown as { default?: unknown }).default ?? ajv.default) as unknown as typeof ajv.Ajv;
  return new Ajv({ strict: false, validateFormats: false, allErrors: false }).compile(schema) as Validate;
}

/** Why a tool's `parameters` is not a JSON schema object (undefined when it is one), as --schema checks its schema. */
export async function parametersProblem(parameters: unknown): Promise<string | undefined> {
  if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters)) return 'must be a JSON schema object';
  try {
    await compile(parameters as Record<string, unknown>);
    return undefined;
  } catch (err) {
    return `are not a valid JSON schema (${(err as Error).message})`;
  }
}

/** Chat's `response_format` for the schema (strict). */
export const chatResponseFormat = (s: AnswerSchema) => ({ type: 'json_schema', json_schema: { name: s.name, schema: s.schema, strict: true } });

/** Responses' `text.format` for the schema (strict). */
export const responsesTextFormat = (s: AnswerSchema) => ({ type: 'json_schema', name: s.name, schema: s.schema, strict: true });

/**
 * Prints an answer that had to follow the schema: valid, as JSON (indented on a terminal, one line
 * when piped); not JSON or not valid, as received, then one error line naming the first mismatch
 * and exit 10. With --json (`printed`), the answer was printed whole already: only checked.
 */
export function printSchemaAnswer(io: IO, s: AnswerSchema, text: string, printed = false): void {
  const asReceived = () => printed || io.out(text.endsWith('\n') ? text : `${text}\n`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    asReceived();
    throw new CliError(`the answer is not JSON, so it does not follow --schema (${(err as Error).message})`, EXIT.SCHEMA_MISMATCH);
  }
  if (!s.validate(value)) {
    asReceived();
    const first = s.validate.errors?.[0];
    throw new CliError(`the answer does not follow --schema: ${first?.instancePath || '(the whole answer)'} ${first?.message ?? 'does not match'}`, EXIT.SCHEMA_MISMATCH);
  }
  if (!printed) io.out(`${JSON.stringify(value, null, io.stdoutTTY ? 2 : undefined)}\n`);
}
