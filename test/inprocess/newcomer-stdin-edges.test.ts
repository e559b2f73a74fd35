import { describe, expect, it } from 'vitest';
import type { Command } from '../../src/cli/commander.js';
import { buildProgram } from '../../src/cli/main.js';
import { definitionOf, type ArgSpec } from '../../src/cli/define.js';
import { commandPath } from '../../src/cli/flags/usage-line.js';
import { runInProcess } from '../support/inprocess.js';

function* commandsOf(cmd: Command): Generator<Command> {
  for (const sub of cmd.commands) {
    yield sub;
    yield* commandsOf(sub);
  }
}

/** Every command with a required argument that "-" stands in for, from the definitions. */
async function stdinArgs(): Promise<{ words: string[]; arg: ArgSpec }[]> {
  const found: { words: string[]; arg: ArgSpec }[] = [];
  for (const cmd of commandsOf(await buildProgram())) {
    const def = definitionOf(cmd);
    if (!def || !('run' in def)) continue;
    const args = (def.args ?? []) as readonly ArgSpec[];
    // Help that says "-" reads stdin, and the flag the usage error reads, say one thing.
    for (const a of args) expect(!!a.stdin, `${commandPath(cmd)} ${a.name}: ${a.help}`).toBe(/- for stdin/.test(a.help));
    const first = args[0];
    if (first?.stdin && first.name.startsWith('<')) found.push({ words: commandPath(cmd).split(' ').slice(1), arg: first });
  }
  return found;
}

describe('a required argument that "-" reads from stdin, missing while stdin is piped', () => {
  it('the usage error says to give -, for every such command; with stdin a terminal it does not', async () => {
    const cases = await stdinArgs();
    expect(cases.map((c) => c.words.join(' '))).toContain('batch create');
    const env = { XDG_STATE_HOME: '/tmp/n17/state', XDG_CONFIG_HOME: '/tmp/n17/config', ROUTER_API_KEY: '' };
    for (const { words, arg } of cases) {
      const name = arg.name.slice(1, -1);
      const piped = await runInProcess(words, { input: '{"custom_id":"a"}\n', env });
      expect(piped).toMatchObject({ code: 2, stdout: '' });
      expect(piped.stderr).toBe(`error: missing required argument '${name}' (stdin is piped: give - to read it, as in router ${words.join(' ')} -); see "router ${words.join(' ')} --help"\n`);
      const terminal = await runInProcess(words, { env, tty: { stdin: true, stdout: false, stderr: false } });
      expect(terminal.stderr).toBe(`error: missing required argument '${name}'; see "router ${words.join(' ')} --help"\n`);
    }
  });
});
