import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { instanceOf } from '../../src/emulator/models/json-schema-answer.js';
import { prng, seedOf } from '../../src/emulator/models/models.js';

// What the fake models make for a schema (answers, tool arguments) is checked by a validator we did not write.
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

type Schema = Record<string, unknown>;

const FORMATS = ['date-time', 'date', 'time', 'email', 'uri', 'uuid', 'ipv4', 'ipv6', 'hostname', 'duration', 'uri-reference', 'idn-email', 'json-pointer', 'regex', 'iri'];

/** Formats of one length: a minLength past it is a schema nothing fits. */
const FIXED = ['date', 'uuid', 'ipv4', 'ipv6'];

const num = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ min: -1000, max: 1000, noNaN: true, noDefaultInfinity: true }).map((d) => Math.round(d * 8) / 8));

/** A number schema whose bounds leave at least one value (an integer one when the type is integer). */
const numberSchema = fc
  .record({ integer: fc.boolean(), low: fc.option(num, { nil: undefined }), span: fc.option(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 }), fc.double({ min: 0.01, max: 50, noNaN: true })), { nil: undefined }), exclusive: fc.boolean(), multipleOf: fc.option(fc.constantFrom(2, 5, 0.5, 0.25, 3), { nil: undefined }), withDefault: fc.boolean() })
  .map(({ integer, low, span, exclusive, multipleOf, withDefault }) => {
    const s: Schema = { type: integer ? 'integer' : 'number' };
    if (low !== undefined) s[exclusive ? 'exclusiveMinimum' : 'minimum'] = low;
    if (low !== undefined && span !== undefined) s[exclusive ? 'exclusiveMaximum' : 'maximum'] = low + span + (exclusive ? 2 : 0) + (integer || multipleOf ? 6 : 0);
    else if (span !== undefined) s.maximum = span;
    if (multipleOf !== undefined) s.multipleOf = integer && !Number.isInteger(multipleOf) ? 2 : multipleOf;
    if (withDefault) s.default = 100;
    return s;
  });

const stringSchema = fc
  .record({ format: fc.option(fc.constantFrom(...FORMATS), { nil: undefined }), minLength: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }), maxLength: fc.option(fc.integer({ min: 40, max: 80 }), { nil: undefined }) })
  .map(({ format, minLength, maxLength }) => ({ type: 'string', ...(format ? { format } : {}), ...(minLength !== undefined && !FIXED.includes(format ?? '') ? { minLength } : {}), ...(maxLength !== undefined ? { maxLength } : {}) }));

const enumSchema = fc.oneof(fc.uniqueArray(fc.string({ maxLength: 6 }), { minLength: 1, maxLength: 5 }), fc.uniqueArray(fc.integer(), { minLength: 1, maxLength: 5 })).map((values) => ({ enum: values }));

const leaf = fc.oneof(numberSchema, stringSchema, enumSchema, fc.constant({ type: 'boolean' }), fc.constant({ type: ['string', 'null'] }));

/** Item schemas with more values than an array holds (uniqueItems of others can be unsatisfiable). */
const distinctMany = (s: Schema) => (s.type === 'string' && !s.format) || ((s.type === 'number' || s.type === 'integer') && s.maximum === undefined && s.exclusiveMaximum === undefined);

const schemaOf = fc.letrec<{ schema: Schema }>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ items: tie('schema'), minItems: fc.integer({ min: 0, max: 3 }), uniqueItems: fc.boolean() }).map(({ items, minItems, uniqueItems }) => ({ type: 'array', items, minItems, ...(uniqueItems && distinctMany(items) ? { uniqueItems } : {}) })),
    fc.dictionary(fc.stringMatching(/^[a-z][a-zA-Z_]{0,7}$/), tie('schema'), { maxKeys: 4 }).chain((properties) =>
      fc.record({ required: fc.subarray(Object.keys(properties)), closed: fc.boolean() }).map(({ required, closed }) => ({ type: 'object', properties, required, ...(closed ? { additionalProperties: false } : {}) })),
    ),
    fc.tuple(tie('schema'), tie('schema')).map(([a, b]) => ({ allOf: [{ type: 'object', properties: { a }, required: ['a'] }, { type: 'object', properties: { b }, required: ['b'] }] })),
  ),
})).schema;

describe('the fake models make values their schemas accept', () => {
  it('for any schema of integers, bounds, enums, formats, required and nested shapes', () => {
    fc.assert(
      fc.property(schemaOf, fc.integer(), (schema, seed) => {
        const value = instanceOf(schema, schema, prng(seed), 0);
        const check = ajv.compile(schema);
        if (!check(value)) throw new Error(`${JSON.stringify(value)} does not fit ${JSON.stringify(schema)}: ${ajv.errorsText(check.errors)}`);
      }),
      { numRuns: 600 },
    );
  });

  it('a date-time or time of an exact length is that long (fast-check seed -1282331208: one longer)', () => {
    for (const [format, shortest] of [['date-time', 22], ['time', 11]] as const) {
      for (let length = shortest; length <= shortest + 30; length++) {
        const schema = { type: 'string', format, minLength: length, maxLength: length };
        const value = instanceOf(schema, schema, prng(1), 0);
        if (!ajv.compile(schema)(value)) throw new Error(`${JSON.stringify(value)} does not fit ${JSON.stringify(schema)}`);
      }
    }
  });

  it('an integer with a default (server-everything sampleLLM maxTokens) is a whole number within its bounds', () => {
    const schema = { type: 'object', properties: { prompt: { type: 'string' }, maxTokens: { type: 'number', default: 100 }, count: { type: 'integer', minimum: 0.5, maximum: 7.5, multipleOf: 2 } }, required: ['prompt', 'count'] };
    for (const seed of ['a', 'b', 'c', 'd']) {
      const value = instanceOf(schema, schema, prng(seedOf(seed)), 0) as Record<string, number>;
      expect(value.maxTokens).toBe(100);
      expect([2, 4, 6]).toContain(value.count);
    }
  });
});
