import { describe, expect, it } from 'vitest';
import type { Command } from '../../src/cli/commander.js';
import { buildProgram, COMMANDS } from '../../src/cli/main.js';

// main.ts keeps an index of every command (name, usage, summary) so that `router --help` needs none of them
// loaded; here that index is checked against the commands themselves, so the two cannot drift apart.

/**
 * The usage the index writes: commander's, "[options]" only for a command with flags of its own, nothing for a
 * group; a command that also runs itself (models) is listed by what it takes, not by its subcommands.
 */
function indexUsage(cmd: Command, runs: boolean): string {
  if (!runs) return '';
  const derived = cmd.usage().replace(/\[command\]\s*/, '');
  return cmd.options.length ? derived : derived.replace(/^\[options\]\s*/, '');
}

describe('the command index of main.ts', () => {
  it('says of each command what its definition says: summary, usage, hidden', async () => {
    const program = await buildProgram();
    const said = [];
    const defined = [];
    for (const entry of COMMANDS) {
      const def = await entry.load();
      const cmd = program.commands.find((c) => c.name() === entry.name)!;
      said.push({ name: entry.name, summary: entry.summary, usage: entry.usage, hidden: entry.hidden ?? false });
      defined.push({ name: def.name, summary: def.summary, usage: 'usage' in def && def.usage ? def.usage : indexUsage(cmd, 'run' in def), hidden: 'hidden' in def ? (def.hidden ?? false) : false });
    }
    expect(said).toEqual(defined);
    expect(said.length).toBe(COMMANDS.length);
  });
});
