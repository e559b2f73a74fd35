/**
 * The typed errors of `router-cli/kit`: each a class with a `code` that says what went wrong and
 * the facts to word it otherwise (the CLI words them for its flags in `cli/kit-words.ts`).
 */
import { namedFileLine } from '../internal/named-input.js';

export class KitError<C extends string = string> extends Error {
  constructor(
    message: string,
    readonly code: C,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** An attachment that cannot be sent: unreadable, empty, too large, of an unknown type, a bad URL. */
export class AttachmentError extends KitError<'unreadable' | 'empty' | 'too_large' | 'unknown_type' | 'invalid_url' | 'audio_url'> {
  constructor(
    code: AttachmentError['code'],
    /** The path, URL or name it was given as. */
    readonly source: string,
    /** Why, in words, without the source. */
    readonly why: string,
  ) {
    super(namedFileLine('attachment', source, why), code);
  }
}

/** A schema refused: `not_json`; `not_object` (an array, a string…); `not_schema`, an object using no JSON Schema word (`{"a": 1}`, `{}`); `invalid_schema`, one ajv cannot compile. */
export class SchemaError extends KitError<'not_json' | 'not_object' | 'not_schema' | 'invalid_schema'> {
  constructor(
    code: SchemaError['code'],
    /** Why, in words (for `not_json` and `invalid_schema`, the parser's or ajv's first problem). */
    readonly why: string,
    /** The file the schema was read from, when it was. */
    readonly source?: string,
  ) {
    const what = source ?? 'the schema';
    const said = { not_object: `${what} ${why}`, not_json: `${what} is not valid JSON (${why})`, not_schema: `${what} is no JSON schema (${why})`, invalid_schema: `${what} is not a valid JSON schema (${why})` };
    super(said[code], code);
  }
}

/** An answer that does not follow its schema: `not_json`, or `mismatch` (the first place, `path`, and why). */
export class SchemaMismatchError extends KitError<'not_json' | 'mismatch'> {
  constructor(
    code: SchemaMismatchError['code'],
    /** The answer as it came. */
    readonly text: string,
    /** The JSON pointer of the first mismatch ('' for the whole answer). */
    readonly path: string,
    /** The parser's or the validator's message. */
    readonly why: string,
  ) {
    super(code === 'not_json' ? `the answer is not JSON, so it does not follow the schema (${why})` : `the answer does not follow the schema: ${path || '(the whole answer)'} ${why}`, code);
  }
}

/** A kept conversation that cannot be had: a bad id, none of that id, a damaged file. */
export class ConversationError extends KitError<'invalid_id' | 'not_found' | 'damaged'> {
  constructor(
    code: ConversationError['code'],
    readonly id: string,
    /** The conversation's file (for `damaged`). */
    readonly file?: string,
  ) {
    const said = {
      invalid_id: `conversation id "${id}": use 1 to 64 letters, digits, ".", "_" or "-", not starting with "."`,
      not_found: `no conversation ${id}`,
      damaged: `the conversation file ${file ?? id} is damaged`,
    };
    super(said[code], code);
  }
}

/**
 * A fragment that cannot be had: `not_found` (no URL, file, alias or hash of that name), `invalid_alias`,
 * `not_text` (binary or not UTF-8), `too_large`, `unreadable` (a file), `fetch_failed` (a URL), `damaged` (a kept one).
 */
export class FragmentError extends KitError<'not_found' | 'invalid_alias' | 'not_text' | 'too_large' | 'unreadable' | 'fetch_failed' | 'damaged'> {
  constructor(
    code: FragmentError['code'],
    /** The path, URL, alias or hash it was given as. */
    readonly source: string,
    /** Why, in words, without the source. */
    readonly why: string,
    /** For `fetch_failed`: the client's error (a `TimeoutError` when the URL stalled). */
    cause?: unknown,
  ) {
    super(namedFileLine('fragment', source, why), code);
    if (cause !== undefined) this.cause = cause;
  }
}

/** Tool calls the model asked for that were not run: a tool with no `run`, an unknown name, the round limit reached. */
export class ToolCallsError extends KitError<'declared' | 'missing' | 'max_rounds'> {
  constructor(
    code: ToolCallsError['code'],
    /** The calls, as the model wrote them. */
    readonly calls: { id: string; name: string; arguments: string }[],
    readonly why: string,
  ) {
    super(`the model asked for ${calls.length === 1 ? 'a tool call' : `${calls.length} tool calls`} that ${calls.length === 1 ? 'was' : 'were'} not run (${why})`, code);
  }
}

/** A model alias that cannot be set or removed: a name with a slash (a model id's), a target that is no model id, none of that name. */
export class AliasError extends KitError<'invalid_name' | 'invalid_model' | 'not_found'> {
  constructor(
    code: AliasError['code'],
    readonly alias: string,
    why: string,
  ) {
    super(why, code);
  }
}

/** A file of the config folder that cannot be used: not JSON, or not the object it should hold. */
export class ConfigFileError extends KitError<'damaged' | 'unreadable'> {
  constructor(
    code: ConfigFileError['code'],
    readonly path: string,
    readonly why: string,
  ) {
    super(code === 'damaged' ? `${path} is damaged (${why}): fix it or move it away` : namedFileLine('config file', path, why), code);
  }
}

/** Placeholders of a saved prompt with no value given (src/kit/placeholders.ts): `missing` names them; `of`, what holds them (a role). */
export class PlaceholderError extends KitError<'missing'> {
  constructor(
    readonly missing: string[],
    readonly of?: string,
  ) {
    super(`${of ? `${of}: ` : ''}no value for ${missing.map((n) => `$${n}`).join(', ')}`, 'missing');
  }
}

/**
 * An embedding collection that cannot be used as asked: a bad name or id, none of that name (or no
 * entry of that id), a model or a vector length other than the collection's, items that cannot be read.
 */
export class CollectionError extends KitError<'invalid_name' | 'invalid_id' | 'not_found' | 'no_entry' | 'no_model' | 'model_mismatch' | 'length_mismatch' | 'invalid_items' | 'incomplete_answer'> {
  constructor(
    code: CollectionError['code'],
    /** The collection's name. */
    readonly collection: string,
    message: string,
    /** For `model_mismatch`: the model the collection keeps. */
    readonly model?: string,
  ) {
    super(message, code);
  }
}

/**
 * A profile of router's that gives no client (src/kit/config-file.ts): `not_found` (a profile named that the config file
 * does not hold), `no_key`, `key_unavailable` (kept in a keychain that cannot be read, a key command that failed),
 * `invalid` (a setting that cannot be used: an API root that is no URL, a key with a space), `damaged` (the config file). Its message never holds a key.
 */
export class ProfileError extends KitError<'not_found' | 'no_key' | 'key_unavailable' | 'invalid' | 'damaged'> {
  constructor(
    code: ProfileError['code'],
    message: string,
    /** The profile's name, where it is known. */
    readonly profile?: string,
    /** The settings' error it says in the kit's words. */
    options?: { cause: unknown },
  ) {
    super(message, code);
    if (options) this.cause = options.cause;
  }
}
