import { expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { examplesPerFile, INTERACTIVE } from '../support/examples.js';

// Every example of every --help runs verbatim against the emulator (the README's: readme-examples).
const runExamples = examplesPerFile();

/** "$ …" lines of a help text, continuation lines joined. */
function helpExamples(text: string): string[] {
  const joined = text.replace(/\\\n\s*/g, '');
  return [...joined.matchAll(/^\s+\$ (.+)$/gm)].map((m) => m[1]!.replace(/\s+#\s.*$/, '').trim());
}

type Command = Awaited<ReturnType<typeof buildProgram>>;

/** The examples of `cmd`'s --help, as `router … --help` prints it (commander's afterHelp). */
function ownExamples(cmd: Command): string[] {
  let help = '';
  cmd.configureOutput({ writeOut: (str: string) => (help += str) });
  cmd.outputHelp();
  return helpExamples(help).filter((e) => !INTERACTIVE.test(e));
}

/** The examples of `cmd`'s --help and of every command under it. */
function examplesUnder(cmd: Command): string[] {
  return [...ownExamples(cmd), ...cmd.commands.filter((sub) => sub.name() !== 'help').flatMap(examplesUnder)];
}

const program = await buildProgram();
/** `router --help`'s own examples, then each command's with its subcommands', in the order they are listed. */
const GROUPS: [string, () => string[]][] = [
  ['router', () => ownExamples(program)],
  ...program.commands.filter((c) => c.name() !== 'help').map((c): [string, () => string[]] => [`router ${c.name()}`, () => examplesUnder(c)]),
];

it('the --help pages have examples to run', () => {
  expect(GROUPS.flatMap(([, examples]) => examples()).length).toBeGreaterThan(25);
});

// A test a command group, in the order they are listed, each with its own bound (all in one test took ~30 s alone,
// and past its 300 s bound beside a loaded full suite).
for (const [group, examples] of GROUPS) {
  it(`every --help example of ${group} runs verbatim`, async () => {
    expect(await runExamples(examples())).toEqual([]);
  });
}
