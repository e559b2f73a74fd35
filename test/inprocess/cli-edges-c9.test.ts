import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Session 62's CLI edges: --schema values that are no schema, -x on indented and cut fences.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

const looks = (flag: string) => `write one as {"type": "object", "properties": {"a": {"type": "string"}}}, or fields as ${flag} 'a, b int'`;

it('--schema given JSON that is no schema ({"a": 1}, {}, [], "x", a file of one) is refused in one line saying what one looks like; nothing sent', async () => {
  const file = join(t.dir, 'not-a-schema.json');
  writeFileSync(file, '{"name": "x", "age": 3}\n');
  const list = join(t.dir, 'list.json');
  writeFileSync(list, '["name", "age"]\n');
  // Was: {"a": 1}, {} and the file sent as an empty schema (any answer "followed" it); [] and "x" "cannot read [] (no such file or folder)".
  const cases: [string[], string][] = [
    [['--schema', '{"a": 1}'], `--schema: {"a": 1} is no JSON schema (it has no "type", "properties" or other JSON Schema keyword); ${looks('--schema')}`],
    [['--schema', '{}'], `--schema: {} is no JSON schema (it is empty); ${looks('--schema')}`],
    [['--schema', '[]'], `--schema: [] is an array, not a JSON schema object; ${looks('--schema')}`],
    [['--schema', '"x"'], `--schema: "x" is a string, not a JSON schema object; ${looks('--schema')}`],
    [['--schema', file], `--schema: ${file} is no JSON schema (it has no "type", "properties" or other JSON Schema keyword); ${looks('--schema')}`],
    [['--schema', list], `--schema: ${list} is an array, not a JSON schema object; ${looks('--schema')}`],
    [['--schema-multi', '{"a": 1}'], `--schema-multi: {"a": 1} is no JSON schema (it has no "type", "properties" or other JSON Schema keyword); ${looks('--schema-multi')}`],
  ];
  for (const [flags, said] of cases) {
    expect(await run(['chat', '-m', 'local/echo', ...flags, 'hi'])).toMatchObject({ code: 2, stdout: '', stderr: `error: ${said}\n` });
  }
  expect(await run(['chat', '-m', 'local/echo', '--schema', '-', 'hi'], {}, '{"a": 1}')).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: --schema: stdin is no JSON schema \(/) });
  expect(t.requests()).toEqual([]);
  // A schema of annotations only is still one (the user meant it), and so is {"type": "object"}.
  expect((await run(['chat', '-m', 'local/echo', '--schema', '{"type": "object"}', '{"a": 1}'])).code).toBe(0);
});

it('--schema that ajv cannot compile: one line at the first place it breaks the rules, not ajv\'s three readings of one typo', async () => {
  const typo = '{"type": "object", "properties": {"a": {"type": "strin"}}}';
  // Was: "schema is invalid: data/properties/a/type must be equal to one of the allowed values, data/properties/a/type must be array, data/properties/a/type must match a schema in anyOf".
  expect(await run(['chat', '-m', 'local/echo', '--schema', typo, 'hi'])).toMatchObject({
    code: 2,
    stdout: '',
    stderr: 'error: --schema: the value is not a valid JSON schema: /properties/a/type must be one of "array", "boolean", "integer", "null", "number", "object", "string"\n',
  });
  const file = join(t.dir, 'required.json');
  writeFileSync(file, '{"type": "object", "required": "a"}');
  expect((await run(['responses', '-m', 'local/echo', '--schema', file, 'hi'])).stderr).toBe(`error: --schema: ${file} is not a valid JSON schema: /required must be array\n`);
  expect((await run(['chat', '-m', 'local/echo', '--schema', '{"type": "string", "pattern": "("}', 'hi'])).stderr).toMatch(/^error: --schema: \{.*\} is not a valid JSON schema: Invalid regular expression: .*\n$/);
  expect(t.requests()).toEqual([]);
});

it('-x takes an indented fence (a block in a list item) and takes its indent off each line, as Markdown reads it', async () => {
  const answer = '1. Run:\n\n   ```sh\n   echo hi\n     two more\n   ```\n2. Done.\n';
  // Was: the whole answer printed and "the answer holds no fenced code block" (llm skips such fences too).
  expect(await run(['chat', '-m', 'local/echo', '-x'], {}, answer)).toMatchObject({ code: 0, stdout: 'echo hi\n  two more\n', stderr: '' });
  // A longer fence is closed only by as long a one of its kind; --extract-last takes the last.
  const two = 'a\n```\none\n```\nb\n~~~~ text\ntwo ```\n~~~\n~~~~~\n';
  expect(await run(['chat', '-m', 'local/echo', '--extract-last'], {}, two)).toMatchObject({ code: 0, stdout: 'two ```\n~~~\n', stderr: '' });
});

it('-x on an answer that ended inside its code block, never closed (not cut), prints the code that came and says so', async () => {
  expect(await run(['chat', '-m', 'local/echo', '-x'], {}, 'Here:\n```py\nprint(1)\n')).toMatchObject({
    code: 0,
    stdout: 'print(1)\n',
    stderr: 'note: the answer ended inside its code block, never closed: printed what came of it (--extract)\n',
  });
  // A fence and no code: nothing of it, and said so.
  expect(await run(['chat', '-m', 'local/echo', '--extract-last'], {}, 'Here:\n```py\n')).toMatchObject({
    code: 0,
    stdout: '',
    stderr: 'note: the answer ended inside its code block, never closed: none of its code came (--extract-last)\n',
  });
});
