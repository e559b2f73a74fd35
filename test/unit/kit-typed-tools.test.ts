import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { functionTool, ResultBudget, runToolCall } from '../../src/kit/index.js';

// functionTool types its function's arguments by its parameters (a JSON schema written as a literal), as
// openai-node's zodFunction does with zod, and holds it to them: arguments that break them go back to the model.
// A prompt's schema written in the call types the answer's `json` the same way. Checking the kit's types takes over a
// minute alone and took 7 in the full suite on this 2-core machine: a long bound.
const ROOT = resolve(import.meta.dirname, '..', '..');

/** The errors `tsc --strict` reports for a program importing router-cli/kit (its src). */
function strictErrors(program: string): string[] {
  const file = join(ROOT, 'test', 'unit', 'typed-tool-program.mts');
  const options = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, types: ['node'] };
  const host = ts.createCompilerHost(options);
  const source = program.replaceAll("'router-cli/kit'", `'${join(ROOT, 'src', 'kit', 'index.js')}'`);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, ...rest) => (name === file ? ts.createSourceFile(name, source, ts.ScriptTarget.ES2022, true) : getSourceFile.call(host, name, ...rest));
  host.fileExists = (name) => name === file || fileExists.call(host, name);
  host.readFile = (name) => (name === file ? source : readFile.call(host, name));
  const checked = ts.createProgram([file], options, host);
  // This file's diagnostics only: the checker then looks at what the program uses of the kit, not at every src file.
  return ts.getPreEmitDiagnostics(checked, checked.getSourceFile(file)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('functionTool and prompt under strict', () => {
  it('a handler destructures its arguments typed by the parameters, a schema answer is typed by its schema; a wrong use is an error', () => {
    const errors = strictErrors(`
import { functionTool, type ChatModel } from 'router-cli/kit';
const add = functionTool('add', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }, ({ a, b }) => a + b);
const greet = functionTool('greet', { type: 'object', properties: { name: { type: 'string' }, times: { type: 'integer' }, tone: { enum: ['warm', 'dry'] }, tags: { type: 'array', items: { type: 'string' } } }, required: ['name'] } as const,
  ({ name, times, tone, tags }) => name.repeat(times ?? 1) + (tone === 'warm' ? '!' : '.') + (tags ?? []).map((t) => t.toUpperCase()).join());
const loose = functionTool('loose', { type: 'object' }, (args) => String(args.anything));
const shape: Record<string, unknown> = { type: 'object' };
const unknownShape = functionTool('unknown', shape, (args) => String(args.anything));
const wrong = functionTool('wrong', { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] }, ({ a }) => a.toUpperCase());
const missing = functionTool('missing', { type: 'object', properties: { a: { type: 'number' } } }, ({ a }) => a.toFixed());
export const tools = [add, greet, loose, unknownShape, wrong, missing];
declare const model: ChatModel;
const city = await model.prompt('a city', { schema: { type: 'object', properties: { name: { type: 'string' }, people: { type: 'integer' } }, required: ['name'] } });
export const named: string = city.json.name.toUpperCase() + (city.json.people ?? 0).toFixed();
const plain = await model.prompt('no schema');
export const untyped: unknown = plain.json;
const talk = model.conversation();
const turn = await talk.prompt('again', { schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } as const });
export const n: string = turn.json.n;
`);
    expect(errors).toEqual([
      expect.stringMatching(/toUpperCase.*does not exist on type 'number'/),
      expect.stringMatching(/'a' is possibly 'undefined'/),
      expect.stringMatching(/Type 'number' is not assignable to type 'string'/),
    ]);
  }, 900_000);

  it('arguments that break the parameters go back to the model as a failed call; the function is not run', async () => {
    const seen: unknown[] = [];
    const add = functionTool('add', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }, (args) => {
      seen.push(args);
      return args.a + args.b;
    });
    const tools = new Map([['add', add]]);
    const opts = { signal: new AbortController().signal, budget: new ResultBudget() };
    expect(await runToolCall(tools, { id: '1', name: 'add', arguments: '{"a":2,"b":"3"}' }, opts)).toMatchObject({ status: 'failed', ok: false, text: 'the arguments do not follow the parameters of add: /b must be number' });
    expect(await runToolCall(tools, { id: '2', name: 'add', arguments: '{"a":2}' }, opts)).toMatchObject({ status: 'failed', text: "the arguments do not follow the parameters of add: the top must have required property 'b'" });
    expect(await runToolCall(tools, { id: '3', name: 'add', arguments: '{"a":2,"b":3}' }, opts)).toMatchObject({ status: 'ok', text: '5' });
    expect(seen).toEqual([{ a: 2, b: 3 }]);
  });
});
