/**
 * llm's concise schema syntax: `name, age int, bio: a short bio` (one field a line when any
 * description holds a comma). Types: str (the default), int, float, bool. Every field is required
 * and no other is allowed, as a strict JSON schema format needs.
 */
import { SchemaError } from './errors.js';

const TYPES: Record<string, string> = { str: 'string', int: 'integer', float: 'number', bool: 'boolean' };
const FIELD = /^([A-Za-z_][\w-]*)(?:\s+(\S+))?$/;

/** Whether the text is written in the concise syntax at all (a field list), rather than a path: a comma, a colon or a space between words. */
export function looksConcise(text: string): boolean {
  const t = text.trim();
  if (!t || t.startsWith('{') || /[/\\]|\.json$|\.ya?ml$/i.test(t)) return false;
  return /[,:\n]/.test(t) || /^[A-Za-z_][\w-]*\s+\S/.test(t);
}

/** The JSON schema of a concise field list; `multi`: an object holding an `items` array of them (llm's --schema-multi). */
export function conciseSchema(text: string, multi = false): Record<string, unknown> {
  const lines = text.includes('\n') ? text.split('\n') : text.split(',');
  const properties: Record<string, Record<string, string>> = {};
  for (const line of lines.map((l) => l.trim()).filter(Boolean)) {
    const colon = line.indexOf(':');
    const head = (colon < 0 ? line : line.slice(0, colon)).trim();
    const description = colon < 0 ? '' : line.slice(colon + 1).trim();
    const m = FIELD.exec(head);
    if (!m) throw new SchemaError('invalid_schema', `"${head || line}" is not a field: write NAME [TYPE][: description], as "age int: their age"`);
    const type = m[2] === undefined ? 'string' : TYPES[m[2]];
    if (!type) throw new SchemaError('invalid_schema', `field ${m[1]}: unknown type "${m[2]}" (str, int, float or bool)`);
    if (m[1] in properties) throw new SchemaError('invalid_schema', `field ${m[1]} is named twice`);
    properties[m[1]] = description ? { type, description } : { type };
  }
  if (!Object.keys(properties).length) throw new SchemaError('invalid_schema', 'no field is named');
  const one = { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
  return multi ? itemsOf(one) : one;
}

/** An object holding an `items` array of the schema's values (llm's --schema-multi). */
export const itemsOf = (schema: Record<string, unknown>): Record<string, unknown> => ({ type: 'object', properties: { items: { type: 'array', items: schema } }, required: ['items'], additionalProperties: false });
