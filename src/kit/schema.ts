/** JSON schemas an answer must follow: compiled with ajv, sent as the API's format, the answer checked. */
import { SchemaError, SchemaMismatchError } from './errors.js';

/** A compiled schema's check: true when `value` follows it; `errors` then says where it does not. */
export type SchemaValidator = ((value: unknown) => boolean) & { errors?: { instancePath: string; message?: string | undefined }[] | null | undefined };
type AjvProblem = { instancePath: string; message?: string; params?: { allowedValues?: unknown[] } };

/** The words of JSON Schema (drafts 7 to 2020-12): an object using none of them is no schema, though ajv takes it as `{}`. */
const KEYWORDS = new Set(
  ('type properties items prefixItems additionalItems additionalProperties patternProperties propertyNames required enum const ' +
    'anyOf oneOf allOf not if then else $ref $dynamicRef $recursiveRef $defs definitions $schema $id $anchor $comment title description default examples ' +
    'minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minLength maxLength pattern format contentMediaType contentEncoding ' +
    'minItems maxItems uniqueItems contains minContains maxContains minProperties maxProperties dependentRequired dependentSchemas dependencies ' +
    'unevaluatedItems unevaluatedProperties nullable readOnly writeOnly deprecated').split(' '),
);

export interface AnswerSchema {
  /** The format's name: the schema's title, made a name, else "answer". */
  name: string;
  schema: Record<string, unknown>;
  validate: SchemaValidator;
}

/** The validator of a schema; an Error saying the first place it breaks the rules of schemas (ajv's own list is three lines for one typo). */
async function compile(schema: Record<string, unknown>): Promise<SchemaValidator> {
  const ajv = await import('ajv');
  // CommonJS seen from ESM: the class is the default export's default.
  const Ajv = ((ajv.default as unknown as { default?: unknown }).default ?? ajv.default) as unknown as typeof ajv.Ajv;
  const checker = new Ajv({ strict: false, validateFormats: false, allErrors: false });
  if (!checker.validateSchema(schema)) throw new Error(firstProblem(checker.errors as AjvProblem[] | null | undefined));
  return checker.compile(schema) as SchemaValidator;
}

function firstProblem(errors: AjvProblem[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return 'it breaks the rules of JSON Schema';
  const allowed = first.params?.allowedValues;
  const message = allowed ? `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` : (first.message ?? 'is not allowed');
  return `${first.instancePath || 'the top'} ${message}`;
}

/** A schema made ready: an object ajv compiles, or JSON text of one (a `SchemaError` otherwise; `source`: the file it came from). */
export async function answerSchema(schema: Record<string, unknown> | string, source?: string): Promise<AnswerSchema> {
  let value: unknown = schema;
  if (typeof schema === 'string') {
    try {
      value = JSON.parse(schema);
    } catch (err) {
      throw new SchemaError('not_json', (err as Error).message, source);
    }
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new SchemaError('not_object', `is ${kindOf(value)}, not a JSON schema object`, source);
  const wrapped = unwrap(value as Record<string, unknown>, source);
  value = wrapped.schema;
  const keys = Object.keys(value as object);
  if (!keys.some((k) => KEYWORDS.has(k))) throw new SchemaError('not_schema', keys.length ? 'it has no "type", "properties" or other JSON Schema keyword' : 'it is empty', source);
  let validate: SchemaValidator;
  try {
    validate = await compile(value as Record<string, unknown>);
  } catch (err) {
    throw new SchemaError('invalid_schema', (err as Error).message, source);
  }
  const title = wrapped.name ?? (typeof (value as { title?: unknown }).title === 'string' ? (value as { title: string }).title : '');
  const name = title.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64) || 'answer';
  return { name, schema: value as Record<string, unknown>, validate };
}

/**
 * The schema inside the wrappers it is sent in, as another program keeps it: chat's `response_format`
 * (`{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`), its `json_schema` alone, Responses'
 * `text.format` (`{"type": "json_schema", "name", "schema"}`); with the name it had there. Anything else as it is.
 */
function unwrap(value: Record<string, unknown>, source: string | undefined): { schema: Record<string, unknown>; name?: string } {
  if (value.type === 'json_object') throw new SchemaError('not_schema', 'it is chat\'s JSON mode, which has no schema: --response-format json_object asks for it', source);
  const inner = value.type === 'json_schema' ? (isObject(value.json_schema) ? value.json_schema : value) : value;
  const wrapper = value.type === 'json_schema' || (isObject(value.schema) && Object.keys(value).every((k) => WRAPPER_KEYS.has(k)));
  if (!wrapper) return { schema: value };
  const schema = inner.schema;
  if (!isObject(schema)) throw new SchemaError('not_object', `is a json_schema format whose "schema" is ${schema === undefined ? 'missing' : kindOf(schema)}, not a JSON schema object`, source);
  return typeof inner.name === 'string' ? { schema, name: inner.name } : { schema };
}

/** The names beside a schema in the `json_schema` of a chat's response_format. */
const WRAPPER_KEYS = new Set(['name', 'schema', 'strict', 'description']);
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

const kindOf = (v: unknown): string => (Array.isArray(v) ? 'an array' : v === null ? 'null' : typeof v === 'string' ? 'a string' : `a ${typeof v}`);

/** Why a tool's `parameters` is not a JSON schema object (undefined when it is one). */
export async function parametersProblem(parameters: unknown): Promise<string | undefined> {
  if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters)) return 'must be a JSON schema object';
  try {
    await compile(parameters as Record<string, unknown>);
    return undefined;
  } catch (err) {
    return `are not a valid JSON schema (${(err as Error).message})`;
  }
}

/** Where arguments break a tool's parameters (`/a must be number`), compiled once; parameters ajv cannot compile check nothing. */
export function argumentsCheck(parameters: Record<string, unknown>): (args: unknown) => Promise<string | undefined> {
  let validator: Promise<SchemaValidator | undefined> | undefined;
  return async (args) => {
    validator ??= compile(parameters).catch(() => undefined);
    const validate = await validator;
    return !validate || validate(args) ? undefined : firstProblem(validate.errors);
  };
}

/** Chat's `response_format` for the schema (strict). */
export const chatResponseFormat = (s: AnswerSchema) => ({ type: 'json_schema', json_schema: { name: s.name, schema: s.schema, strict: true } });

/** Responses' `text.format` for the schema (strict). */
export const responsesTextFormat = (s: AnswerSchema) => ({ type: 'json_schema', name: s.name, schema: s.schema, strict: true });

/** The answer's value when it is JSON that follows the schema; else a `SchemaMismatchError` (`not_json` or `mismatch`). */
export function checkAnswer(s: AnswerSchema, text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SchemaMismatchError('not_json', text, '', (err as Error).message);
  }
  if (!s.validate(value)) {
    const first = s.validate.errors?.[0];
    throw new SchemaMismatchError('mismatch', text, first?.instancePath ?? '', first?.message ?? 'does not match');
  }
  return value;
}
