import { describe, expect, it } from 'vitest';
import { cliErrorOf } from '../../src/cli/kit-words.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { AttachmentError, ConversationError, KitError, SchemaError, SchemaMismatchError, ToolCallsError } from '../../src/kit/errors.js';
import { ToolSourceError } from '../../src/kit/tool.js';

// src/kit's errors say nothing of flags or exit codes; cli/kit-words.ts words each for the CLI, with its exit code.
describe('kit errors in the CLI\'s words', () => {
  it.each([
    [new AttachmentError('empty', 'a.txt', 'the file is empty'), '--attach a.txt: the file is empty', EXIT.USAGE],
    [new SchemaError('not_json', 'Unexpected end', 's.json'), '--schema: s.json is not valid JSON (Unexpected end)', EXIT.USAGE],
    [new SchemaError('not_json', 'Unexpected end'), '--schema: the value is not valid JSON (Unexpected end)', EXIT.USAGE],
    [new SchemaError('not_object', 'is an array, not a JSON schema object'), '--schema: the schema is an array, not a JSON schema object', EXIT.USAGE],
    [new SchemaError('invalid_schema', '/type must be one of "string"', 's.json'), '--schema: s.json is not a valid JSON schema: /type must be one of "string"', EXIT.USAGE],
    [new SchemaMismatchError('mismatch', '{}', '/code', 'must match pattern'), 'the answer does not follow --schema: /code must match pattern', EXIT.SCHEMA_MISMATCH],
    [new SchemaMismatchError('not_json', 'x', '', 'Unexpected token'), 'the answer is not JSON, so it does not follow --schema (Unexpected token)', EXIT.SCHEMA_MISMATCH],
    [new ConversationError('not_found', 'c1'), 'no conversation c1 (router conversations list shows them)', EXIT.NOT_FOUND],
    [new ConversationError('damaged', 'c1', '/s/c1.json'), 'the conversation file /s/c1.json is damaged (router conversations delete c1 removes it)', EXIT.FAILURE],
    [new ConversationError('invalid_id', '.x'), expect.stringMatching(/^conversation id "\.x": use 1 to 64/), EXIT.USAGE],
    [new ToolCallsError('missing', [{ id: '1', name: 'x', arguments: '{}' }], 'there is no tool named x'), 'the model asked for a tool call that was not run (there is no tool named x)', EXIT.TOOL_CALLS],
    [new ToolSourceError('MCP server s: ended', 'ended'), 'MCP server s: ended', EXIT.TOOL_SOURCE],
    [new ToolSourceError('--tools: clash', 'invalid'), '--tools: clash', EXIT.USAGE],
    [new KitError('something else', 'other'), 'something else', EXIT.FAILURE],
  ])('%s', (err, message, code) => {
    expect(cliErrorOf(err)).toMatchObject({ message, exitCode: code });
    expect(err.code).toEqual(expect.any(String));
  });

  it('leaves other errors alone', () => {
    expect(cliErrorOf(new Error('x'))).toBeUndefined();
    expect(cliErrorOf(Object.assign(new Error('gone'), { code: 'ENOENT' }))).toBeUndefined();
  });
});
