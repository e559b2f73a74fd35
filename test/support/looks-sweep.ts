import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { examplesPerFile, INTERACTIVE, type ExampleLook } from './examples.js';

/**
 * The sweep of the CLI's looks over every command: each `--help` page and each --help example (both derived from the
 * command definitions, as examples.test.ts takes them), run verbatim piped under each way a user turns color off or
 * on: no escape code on stdout, no spinner frame on stderr, color on stderr only when FORCE_COLOR asks. (Terminals are
 * drawn in tmux by lists-terminal.test.ts and in process by the *-on-terminal tests; a terminal variant of this sweep
 * through the shim flagged runs it had not taken as terminals, so it was dropped.) The variants are split over
 * test/e2e/looks-*.test.ts, so that they run side by side.
 */

type Command = Awaited<ReturnType<typeof buildProgram>>;
const program = await buildProgram();

/** "$ …" lines of a help text, continuation lines joined (examples.test.ts's reading). */
function helpExamples(cmd: Command): string[] {
  let help = '';
  cmd.configureOutput({ writeOut: (str: string) => (help += str) });
  cmd.outputHelp();
  const joined = help.replace(/\\\n\s*/g, '');
  return [...joined.matchAll(/^\s+\$ (.+)$/gm)].map((m) => m[1]!.replace(/\s+#\s.*$/, '').trim()).filter((e) => !INTERACTIVE.test(e));
}

/** Every command's path under router, groups too, as help lists them. */
function pathsUnder(cmd: Command, path: string[] = []): string[][] {
  return cmd.commands.filter((c) => c.name() !== 'help').flatMap((c) => [[...path, c.name()], ...pathsUnder(c, [...path, c.name()])]);
}

/** Per top-level command: `router PATH --help` for it and every command under it, then their examples. */
const GROUPS = program.commands
  .filter((c) => c.name() !== 'help')
  .map((c) => {
    const paths = [[c.name()], ...pathsUnder(c, [c.name()])];
    const under = (cmd: Command): Command[] => [cmd, ...cmd.commands.filter((s) => s.name() !== 'help').flatMap(under)];
    return { name: c.name(), lines: () => [...paths.map((p) => `router ${p.join(' ')} --help`), ...under(c).flatMap(helpExamples)] };
  });

const ESC = /\x1b/;
/** What a spinner draws: ora's frames (braille dots), a carriage return to redraw (not a CRLF's), the cursor hidden. */
const SPINNER = /[\u2800-\u28ff]|\r(?!\n)|\x1b\[\?25l/;
/** An escape code, or a carriage return that redraws a line (`api -i` prints the head's CRLFs as curl -i does). */
const DRAWN = /\x1b|\r(?!\n)/;
/** The first escape, carriage return or tab in `text`, shown with what surrounds it. */
const at = (text: string, re: RegExp) => {
  const i = text.search(re);
  return JSON.stringify(text.slice(Math.max(0, i - 30), i + 30));
};

const piped = (colorOnStderr: boolean): ExampleLook => (_, { out, err }) => {
  const o = out.toString('utf8');
  const e = err.toString('utf8');
  return [
    ...(DRAWN.test(o) ? [`an escape code or carriage return on piped stdout: ${at(o, DRAWN)}`] : []),
    ...(SPINNER.test(e) ? [`a spinner frame on piped stderr: ${at(e, SPINNER)}`] : []),
    ...(!colorOnStderr && ESC.test(e) ? [`an escape code on piped stderr: ${at(e, ESC)}`] : []),
  ];
};

export const VARIANTS = {
  piped: { name: 'piped', env: {}, look: piped(false) },
  dumb: { name: 'piped, TERM=dumb', env: { TERM: 'dumb' }, look: piped(false) },
  noColor: { name: 'piped, NO_COLOR=1', env: { NO_COLOR: '1' }, look: piped(false) },
  forceOff: { name: 'piped, FORCE_COLOR=0', env: { FORCE_COLOR: '0' }, look: piped(false) },
  forceOn: { name: 'piped, FORCE_COLOR=1', env: { FORCE_COLOR: '1' }, look: piped(true) },
} satisfies Record<string, { name: string; env: Record<string, string>; look: ExampleLook }>;

/** Registers the sweep's tests under each variant: every command's help and examples, a test per top-level command. */
export function sweep(variants: readonly (keyof typeof VARIANTS)[]): void {
  it('the sweep covers every command: a --help page each, and examples', () => {
    const lines = GROUPS.flatMap((g) => g.lines());
    expect(lines.filter((l) => l.endsWith(' --help')).length).toBe(pathsUnder(program).length);
    expect(lines.length).toBeGreaterThan(pathsUnder(program).length + 25);
  });
  for (const variant of variants.map((v) => VARIANTS[v])) {
    describe(variant.name, () => {
      const run = examplesPerFile({ env: variant.env, look: variant.look });
      for (const group of GROUPS) {
        it(`router ${group.name}: every --help page and example`, async () => {
          expect(await run(group.lines())).toEqual([]);
        });
      }
    });
  }
}
