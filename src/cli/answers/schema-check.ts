/** `--schema JSON|FIELDS|FILE`: the JSON schema an answer must follow (src/kit's), read from the flag and its answer printed. */
import { existsSync } from 'node:fs';
import { readTextFile, refuseBlankJson } from '../io/input.js';
import type { IO } from '../io/io.js';
import { answerSchema, checkAnswer, type AnswerSchema } from '../../kit/schema.js';
import { conciseSchema, itemsOf, looksConcise } from '../../kit/schema-dsl.js';
import { SchemaError } from '../../kit/errors.js';
import { usage } from '../exit-codes.js';
import { namedFileLine, unreadableWhy } from '../../internal/named-input.js';

export { chatResponseFormat, parametersProblem, responsesTextFormat, type AnswerSchema } from '../../kit/schema.js';

/**
 * The schema of --schema: inline JSON when it starts with "{", llm's concise fields ("name, age int")
 * when no file has that name, else a file ("-" for stdin); one ajv cannot compile is refused before sending.
 * `multi` (--schema-multi): an object holding an `items` array of such values.
 */
export async function loadSchema(value: string | undefined, io: IO, multi = false): Promise<AnswerSchema | undefined> {
  if (value === undefined) return undefined;
  const flag = multi ? '--schema-multi' : '--schema';
  if (isConcise(value)) return answerSchema(conciseOrUsage(flag, value, multi));
  const inline = /^\s*\{/.test(value) || (/^\s*(["[]|-?\d)/.test(value) && !existsSync(value));
  if (!inline && value !== '-' && /^[A-Za-z_][\w-]*$/.test(value) && !existsSync(value)) {
    throw usage(namedFileLine(flag, value, `${unreadableWhy('ENOENT')}; a schema of one text field is written "${value} str"`));
  }
  const text = inline ? value : await readTextFile(flag, value, io);
  if (!inline) refuseBlankJson(flag, value, text);
  try {
    const one = await answerSchema(text, inline ? undefined : value);
    return multi ? answerSchema(itemsOf(one.schema)) : one;
  } catch (err) {
    if (!(err instanceof SchemaError)) throw err;
    const other = inline || value === '-' || err.code === 'not_json' ? undefined : await otherFlagFile(text, value);
    throw usage(other ? `${flag}: ${value}: ${other}` : schemaWords(flag, inline ? value : value === '-' ? 'stdin' : value, err, inline));
  }
}

/** A file for another flag given as a schema (a --tools file, another program's MCP servers): what it is and where it goes. */
async function otherFlagFile(text: string, file: string): Promise<string | undefined> {
  const { isToolsValue, serversFileProgram } = await import('../../kit/mcp-config-file.js');
  if (isToolsValue(JSON.parse(text))) return `it is a file of tools, not a schema: give it as --tools ${file}`;
  return (await serversFileProgram([file]))?.replace(', not a server', ', not a schema');
}

/** What a schema looks like, said when the one given is none. */
const looks = (flag: string) => `write one as {"type": "object", "properties": {"a": {"type": "string"}}}, or fields as ${flag} 'a, b int'`;

/** A refused schema in one line: the flag, the value (when short) or file, why, and for one that is no schema what one looks like. */
function schemaWords(flag: string, given: string, err: SchemaError, inline: boolean): string {
  const what = !inline ? given : given.length <= 40 && !given.includes('\n') ? given.trim() : 'the value';
  if (err.code === 'not_json') return `${flag}: ${what} is not valid JSON (${err.why})`;
  if (err.code === 'invalid_schema') return `${flag}: ${what} is not a valid JSON schema: ${err.why}`;
  if (err.code === 'not_object') return `${flag}: ${what} ${err.why}; ${looks(flag)}`;
  return `${flag}: ${what} is no JSON schema (${err.why}); ${looks(flag)}`;
}

/** --schema-multi X is --schema X for an `items` array of them (llm's); the two are one flag's choice. */
export function takeSchemaMulti(opts: { schema?: string; schemaMulti?: string }): void {
  if (opts.schemaMulti === undefined) return;
  if (opts.schema !== undefined) throw usage('give one of --schema and --schema-multi');
  opts.schema = opts.schemaMulti;
}

/** Whether --schema's value is llm's concise field list: written as one, and no file has that name. */
export const isConcise = (value: string): boolean => looksConcise(value) && !existsSync(value);

function conciseOrUsage(flag: string, value: string, multi: boolean): Record<string, unknown> {
  try {
    return conciseSchema(value, multi);
  } catch (err) {
    if (err instanceof SchemaError) throw usage(`${flag}: ${err.why}`);
    throw err;
  }
}

/**
 * Prints an answer that had to follow the schema: valid, as JSON (indented on a terminal, one line
 * when piped), through --jq if given; not JSON or not valid, as received (JSON through --jq), then the kit's SchemaMismatchError (exit 10).
 * With --json (`printed`), the answer was printed whole already: only checked.
 */
export function printSchemaAnswer(io: IO, s: AnswerSchema, text: string, printed = false): void {
  let value: unknown;
  try {
    value = checkAnswer(s, text);
  } catch (err) {
    if (!printed) printAsReceived(io, text);
    throw err;
  }
  // As JSON output is: through --jq when it is given (see jqOnSchemaAnswer).
  if (!printed) io.json(value);
}

/** An answer that does not follow the schema: as received; through --jq when it is JSON at all (exit 10 follows). */
function printAsReceived(io: IO, text: string): void {
  if (io.jsonShape.jq !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (value !== undefined) {
      io.json(value);
      return;
    }
  }
  io.out(io.redact(text.endsWith('\n') ? text : `${text}\n`));
}

/**
 * With --schema, what the command prints is the answer, a JSON value: a --jq given without --json
 * filters it (`--schema s.json --jq .n`). With --json too, --jq filters the completion as before.
 */
export function jqOnSchemaAnswer(opts: { schema?: string; jq?: string; json?: boolean }, argv: readonly string[]): void {
  const end = argv.indexOf('--');
  const typed = (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--json' || a.startsWith('--json='));
  if (opts.schema !== undefined && opts.jq !== undefined && !typed) opts.json = false;
}
