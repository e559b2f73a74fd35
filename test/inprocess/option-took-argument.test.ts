import { describe, expect, it } from 'vitest';
import type { Command } from '../../src/cli/commander.js';
import { buildProgram } from '../../src/cli/main.js';
import { commandPath } from '../../src/cli/flags/usage-line.js';
import { runInProcess } from '../support/inprocess.js';

// A flag whose value is optional (`--results [file]`) written before a command's required argument takes the argument
// as its value (router batch get --results batch_1): the usage error says so and gives the order that works.

function* commandsOf(cmd: Command): Generator<Command> {
  for (const sub of cmd.commands) {
    yield sub;
    yield* commandsOf(sub);
  }
}

/** Every command with a required first argument and a flag of its own whose value is optional, from the definitions. */
async function cases(): Promise<{ words: string[]; flag: string; arg: string }[]> {
  const found: { words: string[]; flag: string; arg: string }[] = [];
  for (const cmd of commandsOf(await buildProgram())) {
    const first = cmd.registeredArguments[0];
    const flag = cmd.options.find((o) => o.optional && !o.required && o.long);
    if (first?.required && flag) found.push({ words: commandPath(cmd).split(' ').slice(1), flag: flag.long!, arg: first.name() });
  }
  return found;
}

describe('a required argument taken as an optional flag value', () => {
  it('the usage error names the flag that took it and the order that works; nothing is sent', async () => {
    const all = await cases();
    expect(all.map((c) => c.words.join(' '))).toContain('batch get');
    const env = { XDG_STATE_HOME: '/tmp/otk/state', XDG_CONFIG_HOME: '/tmp/otk/config', ROUTER_API_KEY: 'sk-or-v1-unused', ROUTER_API_ROOT: 'http://127.0.0.1:9/api' };
    for (const { words, flag, arg } of all) {
      const got = await runInProcess([...words, flag, 'batch_x1'], { env, tty: { stdin: true, stdout: false, stderr: false } });
      const path = `router ${words.join(' ')}`;
      expect(got, path).toMatchObject({ code: 2, stdout: '' });
      expect(got.stderr, path).toMatch(new RegExp(`^error: missing required argument '${arg}' \\(${flag} took "batch_x1" as its \\w+: give ${arg} first, as in ${path} batch_x1 ${flag}\\); see "${path} --help"\\n$`));
    }
  });

  it('the flag given without a value before the argument is no such case', async () => {
    const env = { XDG_STATE_HOME: '/tmp/otk/state', XDG_CONFIG_HOME: '/tmp/otk/config', ROUTER_API_KEY: '' };
    const got = await runInProcess(['batch', 'get', '--results'], { env, tty: { stdin: true, stdout: false, stderr: false } });
    expect(got).toMatchObject({ code: 2, stdout: '', stderr: `error: missing required argument 'id'; see "router batch get --help"\n` });
  });
});
