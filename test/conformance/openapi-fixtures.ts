/**
 * Answers generated from the official OpenAPI description (shared/reference): each operation's own
 * example, and the odd shapes its schemas allow (content as parts, no choices, a failed response),
 * made by patching that example. Every fixture is checked against its schema before a test serves
 * it (test/inprocess/openapi-answers.test.ts), so the CLI is tested on what the real service may
 * send, not only on what the emulator sends.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import Ajv2020 from 'ajv/dist/2020.js';
import standalone from 'ajv/dist/standalone/index.js';

const SPEC = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..', 'shared', 'reference', 'openrouter-openapi.yaml');

/** Where parsed and compiled forms are kept between runs; ROUTER_TEST_OPENAPI_CACHE for a test of that keeping. */
const CACHE = process.env.ROUTER_TEST_OPENAPI_CACHE ?? resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'node_modules', '.cache', 'router-tests');

type Method = 'get' | 'post' | 'patch' | 'delete';
type Validate = ((v: unknown) => boolean) & { errors?: { instancePath: string; message?: string }[] | null };
type Json = Record<string, any>;  

let loaded: { doc: Json; ajv: InstanceType<typeof Ajv2020.default> } | undefined;

/**
 * Keeps `text` as `file` under CACHE (through a file of this process's, renamed into place), and removes what was
 * kept there for another YAML: the files named by `prefix` that `current` does not match. Unkept, the next process
 * makes it again.
 */
function keep(file: string, text: string, prefix: string, current: (name: string) => boolean): void {
  try {
    mkdirSync(CACHE, { recursive: true });
    const temp = `${file}.${process.pid}`;
    writeFileSync(temp, text);
    renameSync(temp, file);
    for (const name of readdirSync(CACHE)) if (name.startsWith(prefix) && !current(name)) rmSync(join(CACHE, name), { force: true });
  } catch {
    // Not kept, or not yet pruned: the next process tries again.
  }
}

/**
 * The OpenAPI YAML (1.3 MB) takes ~0.6 s of CPU to parse, in every worker of a run: it is parsed once
 * and kept as JSON (~10 ms to read) under node_modules/.cache, named by the YAML's size and time.
 */
function parsedSpec(): Json {
  const { size, mtimeMs } = statSync(SPEC);
  const name = `openapi-${size}-${Math.trunc(mtimeMs)}.json`;
  const cache = join(CACHE, name);
  try {
    return JSON.parse(readFileSync(cache, 'utf8')) as Json;
  } catch {
    const doc = YAML.parse(readFileSync(SPEC, 'utf8')) as Json;
    // A file of another process's being written (name.json.PID) is left to it.
    keep(cache, JSON.stringify(doc), 'openapi-', (kept) => kept.startsWith(name));
    return doc;
  }
}

const AJV_OPTIONS = { strict: false, validateFormats: false, allErrors: true };

function spec() {
  if (loaded) return loaded;
  const doc = parsedSpec();
  const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ ...AJV_OPTIONS, code: { source: true } });
  ajv.addSchema({ $id: 'oas', components: doc.components });
  loaded = { doc, ajv };
  return loaded;
}

/** The parsed OpenAPI description, shared by every check in this process (read-only). */
export const openApiDoc = (): Json => spec().doc;

const standaloneCode = standalone as unknown as typeof standalone.default;
const compiled = new Map<string, Validate>();
let validatorsKey: string | undefined;

/** Where the validator named `key` is kept as code: named by a hash of the YAML, of ajv's version and options, and of the key. */
function keptValidator(key: string): string {
  validatorsKey ??= createHash('sha256')
    .update(readFileSync(SPEC))
    .update(JSON.stringify([createRequire(import.meta.url)('ajv/package.json').version, AJV_OPTIONS]))
    .digest('hex')
    .slice(0, 16);
  return join(CACHE, `validator-${validatorsKey}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}.cjs`);
}

/**
 * Compiling a schema costs far more than using it: each is compiled once per process, and kept as ajv's standalone
 * code under node_modules/.cache for the next processes and runs (compiling took ~2.5 s of the ~13 s of CPU a run of
 * the conformance files used, in three processes; loading the kept code takes a few milliseconds).
 */
const once = (key: string, compile: () => Validate): Validate => {
  let validate = compiled.get(key);
  if (validate) return validate;
  const file = keptValidator(key);
  try {
    validate = createRequire(file)(file) as Validate;
  } catch {
    validate = compile();
    keep(file, standaloneCode(spec().ajv, validate as Parameters<typeof standaloneCode>[1]), 'validator-', (kept) => kept.startsWith(`validator-${validatorsKey}-`));
  }
  compiled.set(key, validate);
  return validate;
};

const withOasRefs = (schema: unknown) => JSON.parse(JSON.stringify(schema).replace(/"#\/components/g, '"oas#/components')) as object;

function media(method: Method, path: string, status: string, type: string): Json {
  const op = spec().doc.paths[path]?.[method];
  const content = op?.responses?.[status]?.content?.[type];
  if (!content) throw new Error(`the OpenAPI has no ${type} answer ${status} for ${method.toUpperCase()} ${path}`);
  return content;
}

/** The schema of an operation's answer, compiled. */
export function answerValidator(method: Method, path: string, status = '200', type = 'application/json'): Validate {
  return once(`answer ${method} ${path} ${status} ${type}`, () => spec().ajv.compile(withOasRefs(media(method, path, status, type).schema)));
}

/** The schema of an operation's JSON request body, compiled. */
export function requestValidator(method: Method, path: string): Validate {
  return once(`request ${method} ${path}`, () => spec().ajv.compile(withOasRefs(spec().doc.paths[path][method].requestBody.content['application/json'].schema)));
}

/** A named component schema, compiled. */
export function schemaValidator(name: string): Validate {
  return once(`schema ${name}`, () => spec().ajv.compile({ $ref: `oas#/components/schemas/${name}` }));
}

/** The operation's own example answer (a fresh copy). */
export function exampleAnswer(method: Method, path: string, status = '200'): Json {
  const m = media(method, path, status, 'application/json');
  return structuredClone(m.example ?? m.schema.example);
}

/** The operation's own example request body (a fresh copy). */
export function exampleRequest(method: Method, path: string): Json {
  return structuredClone(spec().doc.paths[path][method].requestBody.content['application/json'].example);
}

/** The example of a named component schema (a fresh copy). */
export function exampleOf(name: string): Json {
  return structuredClone(spec().doc.components.schemas[name].example);
}

/** Why `value` does not fit `validate`, or '' when it does. */
export function violations(validate: Validate, value: unknown): string {
  if (validate(value)) return '';
  return (validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
}

const chat = () => exampleAnswer('post', '/chat/completions');
const chunk = (patch: Json) => ({ ...exampleOf('ChatStreamChunk'), ...patch });
const response = () => exampleAnswer('post', '/responses');

/** Chat completions the ChatResult schema allows. */
export const CHAT_ANSWERS = {
  example: () => chat(),
  contentParts: () => {
    const c = chat();
    c.choices[0].message.content = [{ type: 'text', text: 'Paris, ' }, { type: 'text', text: 'on the Seine.' }];
    return c;
  },
  noChoices: () => ({ ...chat(), choices: [] }),
  errorFinish: () => {
    const c = chat();
    c.choices[0].finish_reason = 'error';
    c.choices[0].message.content = null;
    return c;
  },
};

/** Chat streams: their chunks fit ChatStreamChunk. */
export const CHAT_STREAMS = {
  example: () => [exampleOf('ChatStreamChunk'), chunk({ choices: [{ delta: {}, finish_reason: 'stop', index: 0 }] })],
  usageOnly: () => [chunk({ choices: [], usage: chat().usage })],
  errorFinish: () => [exampleOf('ChatStreamChunk'), chunk({ choices: [{ delta: { content: null }, finish_reason: 'error', index: 0 }] })],
  refusal: () => [chunk({ choices: [{ delta: { refusal: 'I cannot help with that.' }, finish_reason: null, index: 0 }] }), chunk({ choices: [{ delta: {}, finish_reason: 'stop', index: 0 }] })],
  errorFinishWithText: () => [exampleOf('ChatStreamChunk'), chunk({ choices: [{ delta: { content: ', wor' }, finish_reason: 'error', index: 0 }] })],
};

/** Responses results the /responses answer schema allows. */
export const RESPONSES_ANSWERS = {
  example: () => response(),
  failed: () => ({ ...response(), status: 'failed', error: { code: 'server_error', message: 'the upstream provider went away' } }),
  cancelled: () => ({ ...response(), status: 'cancelled' }),
  refusal: () => {
    const r = response();
    delete r.output_text;
    r.output = [{ id: 'msg-1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] }];
    return r;
  },
  noOutput: () => {
    const r = response();
    delete r.output_text;
    r.output = [];
    return r;
  },
};

/** Responses streams: their events fit StreamEvents. */
export const RESPONSES_STREAMS = {
  refusal: () => [exampleOf('BaseRefusalDeltaEvent'), { type: 'response.completed', sequence_number: 5, response: RESPONSES_ANSWERS.refusal() }],
  noOutput: () => [{ type: 'response.completed', sequence_number: 1, response: RESPONSES_ANSWERS.noOutput() }],
};
