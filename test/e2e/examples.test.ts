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

it('every --help example of every command runs verbatim', async () => {
  const program = await buildProgram();
  const paths: string[][] = [[]];
  const walk = (cmd: typeof program, path: string[]) => {
    for (const sub of cmd.commands) {
      if (sub.name() === 'help') continue;
      paths.push([...path, sub.name()]);
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(program, []);
  const examples: string[] = [];
  for (const p of paths) {
    // The help text as `router … --help` prints it, examples included (commander's afterHelp).
    let cmd = program;
    for (const name of p) cmd = cmd.commands.find((c) => c.name() === name)!;
    let help = '';
    cmd.configureOutput({ writeOut: (str: string) => (help += str) });
    cmd.outputHelp();
    examples.push(...helpExamples(help).filter((e) => !INTERACTIVE.test(e)));
  }
  expect(examples.length).toBeGreaterThan(25);
  expect(await runExamples(examples)).toEqual([]);
}, 300_000); // a guard against a hang: ~30 s alone, over 120 s beside a loaded full suite
