import { describe, expect, it } from 'vitest';
import { Command } from '../../src/cli/commander.js';
import { buildProgram, GLOBAL_WITH_VALUE } from '../../src/cli/main.js';
import { defineCommand, definitionOf, register } from '../../src/cli/define.js';
import { commandTree } from '../../src/cli/commands/completion/tree.js';
import { oneCallFlags } from '../../src/cli/flags/flags.js';
import { CHAT_FLAGS } from '../../src/cli/commands/chat/flags.js';

// Facts of a command live in its definition (src/cli/define.ts) and every list is derived from there:
// completions, the --json fields, the flags chat -i refuses, the ledger. A command added is in them all.

const probe = defineCommand({
  name: 'probe',
  summary: 'a command no list names',
  args: [{ name: '<name>', help: 'a role', complete: 'roles' }],
  flags: {
    model: { flags: '--model <id>', help: 'a model', complete: 'models' },
    level: { flags: '--level <n>', help: 'a level', choices: ['low', 'high'] },
    json: { flags: '--json', help: 'print it as JSON' },
  },
  jsonFields: ['id', 'name'],
  run: async () => {},
});

describe('lists derived from the command definitions', () => {
  it('a new definition is in the completions: its summary, flags, their values and its argument', () => {
    const program = new Command('router');
    register(program, probe);
    const node = commandTree(program).find((n) => n.path === 'probe')!;
    expect(node.summary).toBe('a command no list names');
    expect(node.arg).toEqual({ dynamic: 'roles' });
    expect(node.flags.find((f) => f.name === '--model')).toMatchObject({ dynamic: 'models', takesValue: true });
    expect(node.flags.find((f) => f.name === '--level')?.choices).toEqual(['low', 'high']);
    expect(commandTree(program).find((n) => n.path === '')!.subcommands).toEqual([{ name: 'probe', summary: 'a command no list names' }]);
  });

  it('every command with --json says its JSON fields in its definition', async () => {
    const program = await buildProgram();
    const missing: string[] = [];
    const walk = (cmd: Command, path: string) => {
      for (const c of cmd.commands) {
        const at = `${path}${c.name()}`;
        const def = definitionOf(c);
        if (c.options.some((o) => o.long === '--json') && !(def && 'run' in def && def.jsonFields?.length)) missing.push(at);
        walk(c, `${at} `);
      }
    };
    walk(program, '');
    expect(missing).toEqual([]);
  });

  it('chat -i refuses what chat\'s table marks as of one call, and a flag marked so joins them', () => {
    expect(oneCallFlags(CHAT_FLAGS).map(([, long]) => long)).toEqual(expect.arrayContaining(['--json', '--stream', '--schema', '--usage', '--web']));
    expect(oneCallFlags(CHAT_FLAGS).map(([, long]) => long)).not.toContain('--approve');
    expect(oneCallFlags({ ...CHAT_FLAGS, fresh: { flags: '--fresh <x>', help: 'new', oneCall: true } }).at(-1)).toEqual(['fresh', '--fresh']);
  });

  it('the commands that write the usage ledger say so (a group for its commands)', async () => {
    const program = await buildProgram();
    const logs = program.commands.filter((c) => definitionOf(c)?.logsUsage).map((c) => c.name());
    expect(logs).toEqual(['chat', 'responses', 'embed', 'embed-multi', 'similar', 'speak', 'decide', 'batch']);
  });

  it('the global flags that take a value come from their table', () => {
    expect([...GLOBAL_WITH_VALUE]).toEqual(['-p', '--profile', '--api-root', '--timeout', '--max-retries']);
  });
});
