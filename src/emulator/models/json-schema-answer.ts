import { prng, seedOf } from './models.js';
import { bad } from '../http/validate.js';
import { numberOf, stringOf } from './schema-scalars.js';

type Schema = Record<string, unknown>;
type Body = Record<string, unknown>;

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
  if (Array.isArray(s.allOf) && s.allOf.length) return instanceOf(allOf(s), root, rand, depth + 1, budget);
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
      const itemSchema = (i: number): unknown => (Array.isArray(s.prefixItems) && s.prefixItems[i] ? s.prefixItems[i] : s.items);
      const itemOf = (i: number, again = false) => {
        const sub = itemSchema(i);
        // Made again: not the default again.
        return instanceOf(again && sub && typeof sub === 'object' ? { ...sub, default: undefined } : sub, root, rand, depth + 1, budget);
      };
      if (!s.uniqueItems) return Array.from({ length: n }, (_, i) => itemOf(i));
      // uniqueItems: an item equal to one before it is made again (a few times); numbered strings stay distinct after that.
      const seen = new Set<string>();
      return Array.from({ length: n }, (_, i) => {
        let v = itemOf(i);
        for (let tries = 0; tries < 20 && seen.has(JSON.stringify(v)); tries++) v = itemOf(i, true);
        if (seen.has(JSON.stringify(v)) && typeof v === 'string') v = `${v}${i}`;
        seen.add(JSON.stringify(v));
        return v;
      });
    }
    case 'integer':
    case 'number':
      return numberOf(s, type === 'integer', rand);
    case 'boolean':
      return typeof s.default === 'boolean' ? s.default : rand() < 0.5;
    case 'null':
      return null;
    default:
      return stringOf(s, rand, (chars) => spend(budget, chars));
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

/** The schemas of an `allOf` as one: their properties (a property in two of them: all of its schemas) and their required names together. */
function allOf(s: Schema): Schema {
  const parts = [{ ...s, allOf: undefined }, ...(s.allOf as Schema[])].filter((p) => p && typeof p === 'object');
  const properties: Schema = {};
  for (const part of parts) {
    for (const [key, sub] of Object.entries((part.properties as Schema | undefined) ?? {})) properties[key] = key in properties ? { allOf: [properties[key], sub] } : sub;
  }
  const required = [...new Set(parts.flatMap((p) => (Array.isArray(p.required) ? (p.required as string[]) : [])))];
  return Object.assign({}, ...parts, { allOf: undefined, properties, required });
}
