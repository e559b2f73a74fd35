/**
 * src/kit's typed errors in the CLI's words: the flag they came through named, the exit code from
 * the table (docs/reliability.md). The one place where a kit error becomes a CliError.
 */
import { AliasError, AttachmentError, CollectionError, FragmentError, PlaceholderError, ConversationError, KitError, SchemaError, SchemaMismatchError, ToolCallsError } from '../kit/errors.js';
import { ToolSourceError } from '../kit/tool.js';
import { namedFileLine } from '../internal/named-input.js';
import { SpendError, type SpendErrorCode } from '../kit/spend/errors.js';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';

/** Money refusals are exit 4 as a 402 is; a lock held too long is a plain failure, a bad amount a usage error. */
const SPEND_EXIT: Record<SpendErrorCode, ExitCode> = {
  budget_reached: EXIT.PAYMENT,
  cost_cap_exceeded: EXIT.PAYMENT,
  cost_unbounded: EXIT.PAYMENT,
  budget_unkept: EXIT.PAYMENT,
  budget_busy: EXIT.FAILURE,
  invalid_amount: EXIT.USAGE,
};

/** A fragment none has is exit 5, a URL that failed a network failure, a damaged file a failure; the rest bad input. */
const FRAGMENT_EXIT: Record<FragmentError['code'], ExitCode> = {
  not_found: EXIT.NOT_FOUND,
  fetch_failed: EXIT.NETWORK,
  damaged: EXIT.FAILURE,
  invalid_alias: EXIT.USAGE,
  not_text: EXIT.USAGE,
  too_large: EXIT.USAGE,
  unreadable: EXIT.USAGE,
};

function words(err: KitError): [string, ExitCode] {
  if (err instanceof SpendError) return [err.message, SPEND_EXIT[err.code]];
  if (err instanceof AttachmentError) return [namedFileLine('--attach', err.source, err.why), EXIT.USAGE];
  if (err instanceof SchemaError) {
    if (err.code === 'not_json') return [`--schema: ${err.source ?? 'the value'} is not valid JSON (${err.why})`, EXIT.USAGE];
    if (err.code === 'invalid_schema') return [`--schema: ${err.source ?? 'the value'} is not a valid JSON schema: ${err.why}`, EXIT.USAGE];
    return [`--schema: ${err.message}`, EXIT.USAGE];
  }
  if (err instanceof SchemaMismatchError) {
    if (err.code === 'not_json') return [`the answer is not JSON, so it does not follow --schema (${err.why})`, EXIT.SCHEMA_MISMATCH];
    return [`the answer does not follow --schema: ${err.path || '(the whole answer)'} ${err.why}`, EXIT.SCHEMA_MISMATCH];
  }
  if (err instanceof ConversationError) {
    if (err.code === 'not_found') return [`no conversation ${err.id}${(err as { hint?: string }).hint ?? ''} (router conversations list shows them)`, EXIT.NOT_FOUND];
    if (err.code === 'damaged') return [`${err.message} (router conversations delete ${err.id} removes it)`, EXIT.FAILURE];
    return [err.message, EXIT.USAGE];
  }
  if (err instanceof CollectionError) return collectionWords(err);
  if (err instanceof ToolCallsError) return [err.message, EXIT.TOOL_CALLS];
  if (err instanceof PlaceholderError) {
    const [first] = err.missing;
    const how = first === 'input' ? '$input is the prompt: give one' : `give --param ${first} VALUE${err.missing.length > 1 ? ' for each' : ''}`;
    return [`${err.message} (${how}; $$ writes a literal $)`, EXIT.USAGE];
  }
  if (err instanceof AliasError) return [err.message, err.code === 'not_found' ? EXIT.NOT_FOUND : EXIT.USAGE];
  if (err instanceof FragmentError) return [err.message, FRAGMENT_EXIT[err.code]];
  return [err.message, EXIT.FAILURE];
}

function collectionWords(err: CollectionError): [string, ExitCode] {
  const list = ' (router collections list shows them)';
  if (err.code === 'not_found') return [`${err.message}${list}`, EXIT.NOT_FOUND];
  if (err.code === 'no_entry') return [err.message, EXIT.NOT_FOUND];
  if (err.code === 'model_mismatch') return [`${err.message}: give --model ${err.model} (or none), or use another collection`, EXIT.USAGE];
  if (err.code === 'no_model') return [`${err.message}: give --model (an embedding model, e.g. local/embed), or set a default: router config set embed_model local/embed`, EXIT.USAGE];
  if (err.code === 'length_mismatch' && err.message.includes(', not ')) return [`${err.message}: give its --dimensions (or none)`, EXIT.USAGE];
  if (err.code === 'incomplete_answer' || err.code === 'length_mismatch') return [err.message, EXIT.SERVER];
  return [err.message, EXIT.USAGE];
}

/** The CliError a kit error is reported as; undefined for any other error. */
export function cliErrorOf(err: unknown): CliError | undefined {
  if (err instanceof ToolSourceError) return new CliError(err.message, err.kind === 'invalid' ? EXIT.USAGE : EXIT.TOOL_SOURCE);
  if (!(err instanceof KitError)) return undefined;
  const [message, code] = words(err);
  return new CliError(message, code);
}
