import { join } from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';

// FlagValues is a type: the check is the compiler's, run on a snippet that uses it.
const snippet = `
import type { FlagValues } from './flags.js';
const table = {
  many: { flags: '--many <x...>', help: '' },
  maybe: { flags: '--maybe [x...]', help: '' },
  one: { flags: '--one <x>', help: '' },
  on: { flags: '--on', help: '' },
} as const;
declare const v: FlagValues<typeof table>;
export const many: string[] | undefined = v.many;
export const maybe: string[] | undefined = v.maybe;
export const one: string | undefined = v.one;
export const on: boolean | undefined = v.on;
`;

it('types a variadic flag (<x...>, [x...]) as string[], a flag with a value as string, a switch as boolean', () => {
  const dir = join(import.meta.dirname, '../../src/cli/flags');
  const file = join(dir, '__flag-types.ts');
  const options: ts.CompilerOptions = { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, skipLibCheck: true, types: [] };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) => (name === file ? ts.createSourceFile(name, snippet, lang) : read(name, lang, ...rest));
  host.fileExists = ((exists) => (name: string) => name === file || exists(name))(host.fileExists.bind(host));
  const program = ts.createProgram([file], options, host);
  const errors = ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(errors).toEqual([]);
});
