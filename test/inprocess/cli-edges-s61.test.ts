import { expect, it } from 'vitest';
import { buildProgram, main } from '../../src/cli/main.js';
import { testStreams } from '../support/inprocess.js';

// The CLI's edges closing note 14 left (task c7): each said in one line, with the way out.

/** Every command's words, as `router WORDS --help` takes them (the root's too). */
async function commandPaths(): Promise<string[][]> {
  const paths: string[][] = [[]];
  const walk = (cmd: Awaited<ReturnType<typeof buildProgram>>, path: string[]) => {
    for (const c of cmd.commands) {
      if (c.name() === 'help' || (c as unknown as { _hidden: boolean })._hidden) continue;
      paths.push([...path, c.name()]);
      walk(c, [...path, c.name()]);
    }
  };
  walk(await buildProgram(), []);
  return paths;
}

async function helpOf(path: string[], opts: { tty: boolean; columns: number }): Promise<string> {
  const t = testStreams({ tty: { stdout: opts.tty }, columns: opts.columns });
  expect(await main(['node', 'router', ...path, '--help'], t.streams), path.join(' ')).toBe(0);
  return t.stdout();
}

it("every command's help fits the terminal (80 and 60 columns) and, piped, 80 columns; each example one command a line", async () => {
  const paths = await commandPaths();
  expect(paths.length).toBeGreaterThan(40);
  for (const [tty, columns] of [[true, 80], [true, 60], [false, 60]] as const) {
    const width = tty ? columns : 80;
    for (const path of paths) {
      const help = await helpOf(path, { tty, columns });
      const at = `${path.join(' ')} at ${columns}${tty ? '' : ', piped'}`;
      const blocks = help.trimEnd().split('\n\n');
      const examples = blocks.filter((b) => b.startsWith('Examples:\n')).flatMap((b) => b.split('\n').slice(1));
      // Was: notes hand-wrapped at ~100 columns, over the edge of an 80-column terminal (each line broken in two).
      for (const b of blocks.filter((b) => !b.startsWith('Examples:\n'))) for (const line of b.split('\n')) {
          // A word longer than the room left (a URL) goes alone on its line, as wrapping must leave it.
          if (!/^\s*\S+$/.test(line)) expect([...line].length, `${at}: ${line}`).toBeLessThanOrEqual(width);
        }
      // Was: decide's example in two lines (a backslash, then the rest of the command).
      for (const line of examples) expect(line, at).toMatch(/^ {2}\$ .*router .*[^\\]$/);
    }
  }
}, 120_000);
