import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { definitionOf } from '../../src/cli/define.js';
import type { Command } from '../../src/cli/commander.js';
import { textWidth } from '../../src/cli/markdown/runs.js';
import { BIN, type TestEnv } from '../helpers.js';
import { terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';

// Every command that prints a list or a record (its definition names --json fields), run on a real terminal (tmux) of
// 80 and 120 columns, as a person sees it: no tab (a tab jumps to the next multiple of 8, tearing columns), every line
// within the window (none wrapped onto the next row), a long value (a role's prompt, a key's usage) cut with "…".
// Was: the expanded layout a too-wide list falls back to (roles list with a long name) and records (keys current,
// keys get) printed a long value whole, and the terminal wrapped it under the names; and two table styles (a box for
// usage, roles list, aliases list; borderless columns for models, batch list), now one: borderless.
let t: TestEnv;
terminalsOnEmulator((started) => (t = started));

const PROMPT = `Answer as a pirate would, ${'and keep going '.repeat(8)}then stop.`;
const LONG_MODEL = 'vendor/an-uncommonly-long-model-identifier-from-a-provider-2026-11-30';

/** Commands with --json fields that print no list or record of their own on a terminal, and why. */
const NOT_LISTS: Record<string, string> = {
  chat: "a model's answer",
  responses: "a model's answer",
  embed: 'vectors',
  similar: 'JSON lines, as documented (and as llm similar prints them)',
  speak: 'audio',
  serve: 'a server',
  'batch create': 'a batch id',
  'batch run': "a job's progress",
  'keys create': 'the new key, once',
  'auth migrate': 'moves keys',
  'models show': 'the model as JSON',
  'roles show': 'the prompt as text',
  'conversations show': 'the conversation as text',
  logs: 'prompts and answers as Markdown',
  'fragments show': "the fragment's text",
};

/** The arguments each list or record is run with ('' for none); filled in once the state they show exists. */
const runs: Record<string, string> = {};

/** Every command path whose definition names --json fields. */
function jsonCommands(cmd: Command, path: string[] = []): string[] {
  return cmd.commands.flatMap((c) => {
    const here = [...path, c.name()];
    const def = definitionOf(c);
    return [...(def && 'run' in def && def.jsonFields ? [here.join(' ')] : []), ...jsonCommands(c, here)];
  });
}

/** How many terminals of each width share its commands (they run at once: 2 widths × this many). */
const TERMINALS_PER_WIDTH = 3;

/** Runs `line` (command `path`) on `term` (`columns` wide) and checks what it showed: exit 0, no tab, no line past the window. */
async function checkOn(term: Terminal, columns: number, raw: string, n: number, line: string, path: string): Promise<void> {
  const end = new RegExp(`^END${n}:(\\d+)$`, 'm');
  rmSync(raw, { force: true });
  await term.pipeTo(raw);
  // The begin marker printed (BEGIN3) is not the one typed ("BEG""IN3"): the screen from the run's own output.
  term.run(`clear; echo "BEG""IN${n}"; ${line}; echo "END${n}:$?"`);
  const screen = await term.waitFor(end);
  await term.pipeTo(undefined);
  const bytes = readFileSync(raw, 'utf8');
  const shown = screen.slice(screen.lastIndexOf(`\nBEGIN${n}\n`) + 1, screen.search(end)).split('\n').slice(1, -1);
  expect(end.exec(screen)![1], `${line}\n${screen}`).toBe('0');
  expect(shown.length, `${line}\n${screen}`).toBeGreaterThan(0);
  // What the program wrote to the terminal (the shell's echo of the line holds none).
  expect(bytes.includes('\t'), `${line}: a tab on the terminal`).toBe(false);
  // screen() joins the rows of a wrapped line: each line as printed, measured.
  for (const l of shown) expect(textWidth(l.trimEnd()), `${columns} columns, ${line}:\n${l}`).toBeLessThanOrEqual(columns);
  // One table style on a terminal, gh's borderless columns: no list drawn in a box (usage, roles and aliases were).
  expect(shown.join('\n'), `${columns} columns, ${line}`).not.toMatch(/[│┼├┤┬┴┌┐└┘─]/);
  if (path === 'roles list') {
    expect(screen, line).not.toContain('then stop.');
    expect(screen, line).toMatch(/Answer as[^\n]*…/);
  }
}

describe.skipIf(!HAS_TMUX)('lists and records on a real terminal', () => {
  it('every list and record: no tab, no line past the window, a long value cut with "…"', async () => {
    const ok = async (args: string[]) => {
      const r = await t.run(args, { env: { ROUTER_MANAGEMENT_KEY: t.managementKey } });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.stdout.trim();
    };
    await ok(['roles', 'save', 'pirate', '--system', PROMPT]);
    // A name long enough that the roles table is wider than 80 columns with its prompt whole: the prompt cut with "…".
    await ok(['roles', 'save', 'a-role-with-a-name-long-enough-to-push-the-table-past-80', '--system', PROMPT, '--model', 'local/echo']);
    await ok(['aliases', 'set', 'long', LONG_MODEL]);
    await ok(['models', 'options', 'set', LONG_MODEL, 'temperature', '0.2']);
    await ok(['chat', '--model', 'local/echo', '--conversation', `c-${'x'.repeat(60)}`, `${'tell me about rivers '.repeat(5)}`]);
    const gen = JSON.parse(await ok(['chat', '--model', 'local/echo', '--json', 'hi'])).id as string;
    const notes = join(t.dir, `notes-kept-in-a-folder-with-a-long-name-${'n'.repeat(40)}.txt`);
    writeFileSync(notes, 'the door code is 4711\n');
    await ok(['fragments', 'set', 'notes', notes]);
    await ok(['embed', 'river bank', '-c', 'notes', '--id', 'a', '--model', 'local/embed']);
    const requests = join(t.dir, 'requests.jsonl');
    writeFileSync(requests, `${JSON.stringify({ custom_id: 'a', body: { model: 'local/echo', messages: [{ role: 'user', content: 'a' }] } })}\n`);
    const batch = await ok(['batch', 'create', requests]);
    await ok(['batch', 'get', batch, '--watch', '--interval', '0.05']);
    await ok(['batch', 'run', requests, '--model', 'local/echo']);
    const job = (JSON.parse(await ok(['batch', 'jobs', '--json'])) as { id: string }[])[0]!.id;
    const hash = (JSON.parse(await ok(['keys', 'list', '--json'])) as { hash: string }[])[0]!.hash;
    await ok(['config', 'set', 'model', LONG_MODEL]);
    Object.assign(runs, {
      'collections list': '',
      decide: '--state-text "The food was cold" --model local/judge --noul spam "Is this spam?"',
      'roles list': '',
      'aliases list': '',
      'conversations list': '',
      'fragments list': '',
      'batch list': '',
      'batch get': `${batch} --watch --interval 0.05`,
      'batch jobs': '',
      'batch job': job,
      models: '',
      'models options list': '',
      'models options show': LONG_MODEL,
      credits: '',
      'keys list': '',
      'keys get': hash,
      'keys update': `${hash} --limit 5`,
      'keys current': '',
      generation: gen,
      usage: '--by model',
      'auth status': '',
      'config get': 'model',
      'config list': '',
    });
    // The set is the definitions': a command given --json fields later is either run here or named as no list.
    expect([...Object.keys(runs), ...Object.keys(NOT_LISTS)].sort()).toEqual(jsonCommands(await buildProgram()).sort());

    // Each width's commands are shared among TERMINALS_PER_WIDTH terminals of that width, all running at once: every
    // command still runs at both widths, on a terminal of its own with its own byte copy (a command at a time on each).
    const entries = Object.entries(runs);
    const lanes = [80, 120].flatMap((columns) =>
      Array.from({ length: TERMINALS_PER_WIDTH }, (_, lane) => ({ columns, lane, runs: entries.filter((_, n) => n % TERMINALS_PER_WIDTH === lane) })),
    );
    const terms: Terminal[] = [];
    try {
      // Every lane to its end before the terminals close (a failure in one does not cut the others short).
      const settled = await Promise.allSettled(
        lanes.map(async ({ columns, lane, runs: mine }) => {
          const term = new Terminal({ ...t.env, ROUTER_MANAGEMENT_KEY: t.managementKey, NO_COLOR: '1' });
          terms.push(term);
          term.resize(columns, 50);
          const raw = join(t.dir, `terminal-bytes-${columns}-${lane}`);
          const paths: string[] = [];
          for (const [n, [path, args]] of mine.entries()) {
            await checkOn(term, columns, raw, n, `node ${BIN} ${path} ${args}`, path);
            paths.push(path);
          }
          return paths.map((path) => `${columns} ${path}`);
        }),
      );
      for (const r of settled) if (r.status === 'rejected') throw r.reason;
      const checked = settled.map((r) => (r.status === 'fulfilled' ? r.value : []));
      // Every command ran at both widths.
      expect(checked.flat().sort()).toEqual([80, 120].flatMap((columns) => entries.map(([path]) => `${columns} ${path}`)).sort());
    } finally {
      await Promise.all(terms.map((term) => term.close()));
    }
  });
});
