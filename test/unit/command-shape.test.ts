import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMANDS, listedUsage } from '../../src/cli/main.js';

// main.ts keeps only the names of the commands and where the root help lists them, so that a run loads just its
// own command; all else (summary, usage, flags, JSON fields) is the definition's, and the help shows it from there.

describe('the command index of main.ts', () => {
  it('names each command as its definition does; hidden ones are the scripts\' own (__…)', async () => {
    const named = [];
    for (const entry of COMMANDS) {
      const def = await entry.load();
      named.push({ entry: entry.name, def: def.name, hidden: 'hidden' in def && !!def.hidden });
    }
    expect(named).toEqual(COMMANDS.map((e) => ({ entry: e.name, def: e.name, hidden: e.name.startsWith('__') })));
  });

  it('the root help lists each command with its definition\'s summary and usage', async () => {
    const program = await buildProgram(null);
    const help = program.helpInformation();
    for (const cmd of program.commands.filter((c) => !c.name().startsWith('__'))) {
      const usage = listedUsage(cmd);
      expect(help).toContain(`${cmd.name()}${usage ? ` ${usage}` : ''}`);
      expect(help.replace(/\s+/g, ' ')).toContain(cmd.summary());
    }
    expect(listedUsage(program.commands.find((c) => c.name() === 'api')!)).toBe('[method] <path>');
    expect(listedUsage(program.commands.find((c) => c.name() === 'models')!)).toBe('[search...]');
    expect(listedUsage(program.commands.find((c) => c.name() === 'batch')!)).toBe('');
  });
});

describe('the root help', () => {
  it('lists each command on one line at 80 columns (a wrapped summary hid the next command\'s name)', async () => {
    const program = await buildProgram(null);
    program.configureHelp().helpWidth = 80;
    const help = program.helpInformation();
    const listing = help.slice(help.indexOf('\nGenerate:\n'), help.indexOf('\nCommands:\n')).split('\n');
    expect(listing.length).toBeGreaterThan(20);
    // A line that starts in the summaries' column is a summary cut in two.
    expect(listing.filter((l) => /^ {8,}\S/.test(l))).toEqual([]);
    expect(Math.max(...help.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
  });

  it('fits its examples in 80 columns too (the text after the listing, as router --help prints it)', async () => {
    const program = await buildProgram(null);
    program.configureHelp().helpWidth = 80;
    let out = '';
    program.configureOutput({ writeOut: (s) => (out += s), getOutHelpWidth: () => 80 });
    program.outputHelp();
    expect(out).toContain('Examples:');
    expect(out.split('\n').filter((l) => l.length > 80)).toEqual([]);
  });

  it('every command\'s examples fit 80 columns, a long one continued by ` \\` lines that run as it reads', async () => {
    const program = await buildProgram(null);
    const all = (cmd: Command): Command[] => cmd.commands.filter((c) => c.name() !== 'help').flatMap((c) => [c, ...all(c)]);
    const long: string[] = [];
    const badContinuation: string[] = [];
    let continued = 0;
    for (const cmd of [program, ...all(program)]) {
      let out = '';
      cmd.configureOutput({ writeOut: (s) => (out += s), getOutHelpWidth: () => 80 });
      cmd.outputHelp();
      if (!out.includes('\nExamples:\n')) continue;
      const lines = out.slice(out.indexOf('\nExamples:\n') + 11).trimEnd().split('\n\n')[0]!.split('\n');
      long.push(...lines.filter((l) => l.length > 80).map((l) => `${cmd.name()}: ${l}`));
      // A line ending ` \` is followed by one indented under the command; every other line starts a command.
      lines.forEach((l, i) => {
        const after = i > 0 && lines[i - 1]!.endsWith(' \\');
        if (after) continued++;
        if (after ? !/^ {6}\S/.test(l) : !l.startsWith('  $ ')) badContinuation.push(`${cmd.name()}: ${l}`);
      });
    }
    // Was: 29 example lines of 83 to 154 columns (chat, decide, api, completion, …), each broken in two by the terminal.
    expect(long).toEqual([]);
    expect(badContinuation).toEqual([]);
    expect(continued).toBeGreaterThan(10);
  });

  it('and so does each group\'s help, its subcommands one a line (the detail is in each one\'s own help)', async () => {
    const program = await buildProgram(null);
    const wrapped: string[] = [];
    const groups = (cmd: Command): Command[] => cmd.commands.filter((c) => c.commands.length).flatMap((c) => [c, ...groups(c)]);
    for (const group of groups(program)) {
      group.configureHelp().helpWidth = 80;
      const help = group.helpInformation();
      const listing = help.slice(help.indexOf('\nCommands:\n') + 11).split('\n\n')[0]!.split('\n');
      wrapped.push(...listing.filter((l) => /^ {8,}\S/.test(l)).map((l) => `${group.name()}: ${l.trim()}`));
    }
    expect(groups(program).length).toBeGreaterThan(8);
    expect(wrapped).toEqual([]);
  });
});
