import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv());

describe('help and output conventions', () => {
  it('router --help lists every exit code of the one table', async () => {
    const { EXIT } = await import('../../src/cli/exit-codes.js');
    const r = await t.run(['--help']);
    const listed = /Exit codes: ([^]*?)\.\n/.exec(r.stdout)![1]!.replace(/\s+/g, ' ');
    expect([...listed.matchAll(/(?:^|, )(\d+) /g)].map((m) => Number(m[1]))).toEqual(Object.values(EXIT));
  });

  it('router --help before a command word is the root help, every command with its summary', async () => {
    const root = await t.run(['--help']);
    for (const args of [['--help', 'chat'], ['-h', 'batch', 'list']]) {
      const r = await t.run(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toBe(root.stdout);
    }
    expect(root.stdout).toMatch(/\n {2}responses \[prompt\.\.\.\] +generate/);
  });

  it('every command has a description, and leaf commands show examples', async () => {
    const { buildProgram } = await import('../../src/cli/main.js');
    const leaves: string[][] = [];
    const walk = (cmd: any, path: string[]) => {
      if (cmd.commands.length === 0) leaves.push(path);
      for (const c of cmd.commands) if (c.name() !== 'help' && !c._hidden) walk(c, [...path, c.name()]);
    };
    walk(await buildProgram(), []);
    for (const path of leaves) {
      const r = await t.run([...path, '--help']);
      expect(r.code, path.join(' ')).toBe(0);
      expect(r.stdout, path.join(' ')).toMatch(/Usage: router/);
      // A default is said once: a help text that names it leaves commander's "(default: …)" out.
      expect(r.stdout, path.join(' ')).not.toMatch(/default[^)\n]*\)\s+\(default:/);
      if (!['config get', 'config list', 'config use', 'config delete', 'config path'].includes(path.join(' '))) {
        expect(r.stdout, path.join(' ')).toMatch(/Examples?:|Install:/);
      }
    }
  });

  it('a flag the generation commands share reads the same in each (one definition)', async () => {
    const { buildProgram } = await import('../../src/cli/main.js');
    const program = await buildProgram();
    const commands = ['chat', 'responses', 'embed', 'speak', 'decide'];
    const shared = ['--models', '--temperature', '--top-p', '--reasoning-effort', '--raw', '--session', '--metadata', '--provider-only', '--provider-order', '--provider-ignore', '--no-fallbacks', '--router-metadata', '--max-cost', '--dry-run', '--ignore-budget', '--usage'];
    const readings = new Map<string, Map<string, string[]>>();
    for (const name of commands) {
      for (const o of program.commands.find((c) => c.name() === name)!.options) {
        // Another meaning, in its own words: what speech reports (the audio's size and cost); base64 vectors kept;
        // a collection entry's metadata, a JSON object as llm's `embed --metadata` takes it (no request carries it).
        if (!o.long || !shared.includes(o.long) || ['speak --usage', 'embed --raw', 'embed --metadata'].includes(`${name} ${o.long}`)) continue;
        // A cap over a call with no completion limit to lower refuses it instead: one reading of its own, shared by the three.
        const fixed = o.long === '--max-cost' && ['embed', 'speak', 'decide'].includes(name) ? ' (no completion limit)' : '';
        const reading = `${o.flags}${fixed} | ${o.description} | ${o.argChoices?.join(',') ?? ''}`;
        const byReading = readings.get(o.long) ?? new Map<string, string[]>();
        byReading.set(reading, [...(byReading.get(reading) ?? []), name]);
        readings.set(o.long, byReading);
      }
    }
    for (const flag of shared) expect(readings.has(flag), flag).toBe(true);
    for (const [flag, byReading] of readings) expect([...byReading.entries()], flag).toHaveLength(flag === '--max-cost' ? 2 : 1);
    // Every command with a spend guard takes all three of its flags.
    for (const flag of ['--dry-run', '--ignore-budget']) expect([...readings.get(flag)!.values()][0], flag).toEqual(commands);
    expect([...readings.get('--max-cost')!.values()]).toEqual([['chat', 'responses'], ['embed', 'speak', 'decide']]);
  });

  it('--json parses on each command that prints data', async () => {
    const mgmt = { ROUTER_MANAGEMENT_KEY: t.managementKey };
    const f = join(t.dir, 'b.jsonl');
    writeFileSync(f, '{"custom_id":"a","body":{"messages":[{"role":"user","content":"x"}]}}\n');
    const id = JSON.parse((await t.run(['batch', 'create', f, '--model', 'local/echo', '--json'])).stdout).id;
    const runs: [string[], Record<string, string>?][] = [
      [['chat', '--json', 'hi']],
      [['responses', '--json', '--model', 'local/echo', 'hi']],
      [['embed', '--json', 'hi', '--model', 'local/embed']],
      [['decide', '--json', '--state-text', 's', '--model', 'local/judge', '--noul', 'q', 'yes?'], mgmt],
      [['batch', 'list', '--json']],
      [['batch', 'get', id, '--json']],
      [['config', 'list', '--json']],
      [['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'a.mp3'), '--json'], mgmt],
    ];
    for (const [args, env] of runs) {
      const r = await t.run(args, { env });
      expect(r.code, args.join(' ')).toBe(0);
      expect(() => JSON.parse(r.stdout), args.join(' ')).not.toThrow();
    }
  });

  it('no ANSI codes off a TTY or with NO_COLOR; color only when forced', async () => {
    const plain = await t.run(['chat', '--temperature', '9', 'x']);
    expect(plain.stderr).not.toMatch(/\x1b\[/);
    const noColor = await t.run(['chat', '--no-stream', 'hi'], { env: { NO_COLOR: '1', FORCE_COLOR: '1' } });
    expect(noColor.stdout + noColor.stderr).not.toMatch(/\x1b\[/);
    const forced = await t.run(['batch', 'get', 'batch_none'], { env: { FORCE_COLOR: '1' } });
    expect(forced.stderr).toMatch(/\x1b\[31merror:/);
    const flag = await t.run(['--no-color', 'batch', 'get', 'batch_none'], { env: { FORCE_COLOR: '1' } });
    expect(flag.stderr).not.toMatch(/\x1b\[/);
  });

});
describe('router chat -i', () => {
  it('never prompts when stdin is not a terminal', async () => {
    const r = await t.run(['chat', '-i']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/needs a terminal/);
  });
});
