import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// router completion: the committed scripts against the command tree (Tab in real shells: test/e2e/completion).
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const t = startedForAll(() => startCliEnv());

describe('completions', () => {
  for (const [shell, file] of [['bash', 'router.bash'], ['zsh', '_router'], ['fish', 'router.fish']]) {
    it(`the committed ${shell} script matches the command tree (npm run completions regenerates it)`, async () => {
      const r = await t.run(['completion', shell!]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(readFileSync(join(ROOT, 'completions', file!), 'utf8'));
    });
  }

  it('bash completes subcommands, flags, and allowed values', () => {
    const complete = (words: string[]) =>
      execFileSync('bash', ['-c', `source ${join(ROOT, 'completions', 'router.bash')}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _router; echo "\${COMPREPLY[*]}"`]).toString().trim();
    expect(complete(['router', 'ba'])).toBe('batch');
    expect(complete(['router', 'batch', ''])).toBe('create list get run jobs job');
    expect(complete(['router', 'batch', 'list', '--st'])).toBe('--status');
    expect(complete(['router', 'chat', '--service-tier', 'f'])).toBe('fast flex');
    expect(complete(['router', 'speak', '--for'])).toBe('--format');
  });

  it('bash completes a file name with spaces as one candidate', () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-compl-'));
    writeFileSync(join(dir, 'my notes.txt'), '');
    mkdirSync(join(dir, 'sub'));
    const complete = (words: string[]) =>
      execFileSync('bash', ['-c', `source ${join(ROOT, 'completions', 'router.bash')}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _router; printf '%s|' "\${COMPREPLY[@]}"`], { cwd: dir }).toString();
    // Split on spaces, "my notes.txt" became two candidates, `my` and `notes.txt`: neither a file.
    expect(complete(['router', 'chat', '-a', 'my'])).toBe('my notes.txt|');
    expect(complete(['router', 'batch', 'run', 'my'])).toBe('my notes.txt|');
    expect(complete(['router', 'chat', '--attach', 's'])).toBe('sub|');
  });

  it('bash completes a model id with a colon (bash splits the word there) to the whole id', () => {
    // As bash hands a line to a completion: words split at ":" too (COMP_WORDBREAKS), the line and the cursor.
    const complete = (line: string, words: string[]) =>
      execFileSync('bash', ['-c', [
        `source ${join(ROOT, 'completions', 'router.bash')}`,
        // The service's model list, as the real service names free variants.
        `router() { printf '%s\\n' openai/gpt-4o openai/gpt-4o:free openai/gpt-4o:extended meta/llama; }`,
        `COMP_LINE='${line}'; COMP_POINT=${line.length}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}`,
        `_router; printf '%s|' "\${COMPREPLY[@]}"`,
      ].join('\n')]).toString();
    // Before: prev was ":" and cur "f", so model ids were not offered at all (file names were).
    expect(complete('router chat --model openai/gpt-4o:f', ['router', 'chat', '--model', 'openai/gpt-4o', ':', 'f'])).toBe('free|');
    expect(complete('router chat --model openai/gpt-4o:', ['router', 'chat', '--model', 'openai/gpt-4o', ':'])).toBe('free|extended|');
    expect(complete('router chat --model openai/g', ['router', 'chat', '--model', 'openai/g'])).toBe('openai/gpt-4o|openai/gpt-4o:free|openai/gpt-4o:extended|');
  });

  it('every flag of every command appears in the bash script', async () => {
    const script = readFileSync(join(ROOT, 'completions', 'router.bash'), 'utf8');
    const walk = (cmd: any): string[] => [...cmd.options.filter((o: any) => !o.hidden).map((o: any) => o.long).filter(Boolean), ...cmd.commands.flatMap(walk)];
    for (const flag of walk(await buildProgram())) expect(script).toContain(flag);
  });
});
