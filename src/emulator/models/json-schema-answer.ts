import { prng, seedOf } from './models.js';
import { bad } from '../http/validate.js';

type Schema = Record<string, unknown>;
type Body = Record<string, unknown>;

const WORDS = ['river', 'stone', 'light', 'garden', 'harbor', 'lantern', 'meadow', 'orbit'];
const MAX_DEPTH = 12;
/** The most JSON one answer holds, counted in characters as it is made (a model answers at most 262,144 tokens). */
export const MAX_ANSWER_CHARS = 1_048_576;

/** What is left to make of one answer: a schema whose smallest instance is larger (minItems, minLength, fan-out) is a 400, found before it is made. */
interface Budget {
  left: number;
}

function spend(budget: Budget, chars: number): void {
  if ((budget.left -= chars) < 0) bad(`the JSON schema asks for an answer over ${MAX_ANSWER_CHARS.toLocaleString('en-US')} characters (minItems, minLength or nesting), more than a local model answers`);
}

const JSON_OBJECT: Schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };

/**
 * The JSON schema a request asks its answer to follow (a `json_object` format: any object): chat's `response_format` of type
 * `json_schema` (`{json_schema: {name, schema, strict}}`) or Responses' `text.format`
 * (`{type: json_schema, name, schema, strict}`). Undefined when none is asked.
 */
export function askedSchema(body: Body): Schema | undefined {
  const chat = body.response_format as Body | undefined;
  const text = (body.text as Body | undefined)?.format as Body | undefined;
  const format = chat && typeof chat === 'object' ? chat : text && typeof text === 'object' ? text : undefined;
  // JSON mode asks for any JSON object: the emulator's models answer one of a single string field.
  if (format?.type === 'json_object') return JSON_OBJECT;
  if (!format || format.type !== 'json_schema') return undefined;
  const holder = chat === format ? (format.json_schema as Body | undefined) : format;
  const where = chat === format ? 'response_format.json_schema' : 'text.format';
  if (!holder || typeof holder !== 'object') bad(`${where} is required for a json_schema format`);
  if (typeof holder.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(holder.name)) bad(`${where}.name must be 1 to 64 letters, digits, _ or -`);
  const schema = holder.schema;
  if (schema === undefined) return {};
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) bad(`${where}.schema must be a JSON schema object`);
  return schema as Schema;
}

/** A JSON text that validates against `schema`, the same for the same prompt (what every chat model answers when asked for one). */
export function answerFor(schema: Schema, prompt: string): string {
  const rand = prng(seedOf('json_schema', prompt));
  return JSON.stringify(instanceOf(schema, schema, rand, 0, { left: MAX_ANSWER_CHARS }));
}

/** A value of `schema`, resolving local `#/$defs/...` references against `root`. */
export function instanceOf(schema: unknown, root: Schema, rand: () => number, depth: number, budget: Budget = { left: MAX_ANSWER_CHARS }): unknown {
  spend(budget, 1);
  if (schema === true || schema === undefined || schema === null || typeof schema !== 'object') return depth === 0 ? {} : null;
  const s = schema as Schema;
  if (typeof s.$ref === 'string' && s.$ref.startsWith('#/') && depth < MAX_DEPTH) {
    const target = s.$ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Schema)[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), root);
    return instanceOf(target, root, rand, depth + 1, budget);
  }
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[Math.floor(rand() * s.enum.length)];
  const choices = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(choices) && choices.length) return instanceOf(choices[0], root, rand, depth + 1, budget);
  if (Array.isArray(s.allOf) && s.allOf.length) return instanceOf(Object.assign({}, ...(s.allOf as Schema[])), root, rand, depth + 1, budget);
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];
  const type = types.find((t) => t !== 'null') ?? types[0] ?? (s.properties ? 'object' : s.items ? 'array' : 'string');
  switch (type) {
    case 'object':
      return objectOf(s, root, rand, depth, budget);
    case 'array': {
      const min = typeof s.minItems === 'number' ? s.minItems : 1;
      const max = typeof s.maxItems === 'number' ? s.maxItems : Math.max(min, 3);
      const n = depth >= MAX_DEPTH ? min : Math.min(max, Math.max(min, 1 + Math.floor(rand() * 3)));
      // Each item takes at least a character and a comma: a count the budget cannot hold is refused before an array is made.
      if (n * 2 > budget.left) spend(budget, n * 2);
      const items = Array.from({ length: n }, (_, i) => instanceOf(Array.isArray(s.prefixItems) && s.prefixItems[i] ? s.prefixItems[i] : s.items, root, rand, depth + 1, budget));
      // uniqueItems: numbered strings and numbers stay distinct; others are left as made.
      return s.uniqueItems ? items.map((v, i) => (typeof v === 'string' ? `${v}${i || ''}` : typeof v === 'number' ? v + i * (Number.isInteger(v) ? 1 : 0.5) : v)) : items;
    }
    case 'integer':
    case 'number':
      return numberOf(s, type === 'integer', rand);
    case 'boolean':
      return rand() < 0.5;
    case 'null':
      return null;
    default:
      return stringOf(s, rand, budget);
  }
}

function objectOf(s: Schema, root: Schema, rand: () => number, depth: number, budget: Budget): Body {
  const properties = (s.properties && typeof s.properties === 'object' ? s.properties : {}) as Schema;
  const required = Array.isArray(s.required) ? (s.required as string[]) : [];
  const out: Body = {};
  for (const [key, sub] of Object.entries(properties)) {
    // Optional properties are filled too (strict mode makes them all required), but not past the depth bound.
    if (required.includes(key) || depth < MAX_DEPTH / 2) {
      spend(budget, key.length + 4);
      out[key] = instanceOf(sub, root, rand, depth + 1, budget);
    }
  }
  for (const key of required) {
    if (key in out) continue;
    spend(budget, key.length + 4);
    out[key] = typeof s.additionalProperties === 'object' ? instanceOf(s.additionalProperties, root, rand, depth + 1, budget) : 'value';
  }
  return out;
}

function numberOf(s: Schema, integer: boolean, rand: () => number): number {
  const low = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + (integer ? 1 : 0.5) : typeof s.minimum === 'number' ? s.minimum : 0;
  const high = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - (integer ? 1 : 0.5) : typeof s.maximum === 'number' ? s.maximum : low + 100;
  let n = low + rand() * Math.max(0, high - low);
  if (integer) n = Math.min(Math.ceil(low) + Math.floor(rand() * (Math.floor(high) - Math.ceil(low) + 1)), Math.floor(high));
  else n = Math.round(n * 100) / 100;
  if (typeof s.multipleOf === 'number' && s.multipleOf > 0) n = Math.ceil(low / s.multipleOf) * s.multipleOf;
  return Math.max(low, Math.min(high, n));
}

function stringOf(s: Schema, rand: () => number, budget: Budget): string {
  const formats: Record<string, string> = {
    'date-time': '2026-01-01T12:00:00Z',
    date: '2026-01-01',
    time: '12:00:00Z',
    email: 'someone@example.org',
    uri: 'https://example.org/',
    url: 'https://example.org/',
    uuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    ipv4: '192.0.2.1',
    hostname: 'example.org',
  };
  let text = typeof s.format === 'string' && formats[s.format] ? formats[s.format]! : WORDS[Math.floor(rand() * WORDS.length)]!;
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  if (min > text.length) {
    spend(budget, min);
    text += 'x'.repeat(min - text.length);
  }
  return text.slice(0, max);
}
