import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { commandTree } from '../../src/cli/commands/completion/tree.js';
import { runInProcess } from '../support/inprocess.js';

// After every flag with a known set of values (and before every argument with one), each shell
// offers exactly those values, never file names: the real bash, zsh and fish run the generated scripts.
interface Case {
  words: string[];
  values: readonly string[];
}
let dir: string;
let cases: Case[];
const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'completion-choices-'));
  for (const shell of ['bash', 'zsh', 'fish']) writeFileSync(join(dir, shell), (await runInProcess(['completion', shell])).stdout);
  // A file in the folder the shells run in: offered instead of the values, it shows.
  writeFileSync(join(dir, 'a-file.txt'), '');
  cases = [];
  for (const n of commandTree(await buildProgram())) {
    const path = n.path ? n.path.split(' ') : [];
    for (const f of n.flags) if (f.takesValue && f.choices) cases.push({ words: ['router', ...path, f.name], values: f.choices });
    if (n.arg?.choices) cases.push({ words: ['router', ...path], values: n.arg.choices });
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sorted = (v: readonly string[]) => [...v].sort();

/** One shell run for every case: each case's offers on one line, tab-separated. */
function offers(shell: string, script: (c: Case) => string, prelude: string): string[][] {
  const body = `${prelude}\n${cases.map(script).join('\n')}\n`;
  const r = spawnSync(shell, shell === 'bash' ? ['--norc', '--noprofile', '-c', body] : shell === 'zsh' ? ['-f', '-c', body] : ['--no-config', '-c', body], { cwd: dir, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').slice(0, cases.length).map((l) => (l ? l.split('\t').filter(Boolean) : []));
}

const quoted = (w: string[]) => w.map((x) => `'${x}'`).join(' ');

describe('completion of values', () => {
  it('knows the flags whose parser checks the values itself', () => {
    const keys = cases.map((c) => c.words.slice(1).join(' '));
    expect(keys).toContain('batch list --status');
    expect(keys).toContain('api --method');
    expect(keys).toContain('completion');
  });

  it.skipIf(!has('bash'))('bash offers the values', () => {
    const got = offers('bash', (c) => `COMP_WORDS=(${quoted(c.words)} ''); COMP_CWORD=${c.words.length}; COMPREPLY=(); _router; (IFS=$'\\t'; echo "\${COMPREPLY[*]}")`, `source ${join(dir, 'bash')}`);
    cases.forEach((c, i) => expect({ words: c.words, offers: sorted(got[i]!) }).toEqual({ words: c.words, offers: sorted(c.values) }));
  });

  it.skipIf(!has('zsh'))('zsh offers the values', () => {
    // The completion system's builtins, printing what they are given.
    const stubs = `compadd() { [[ $1 == -- ]] && shift; print -rn -- "\${(pj:\\t:)@}"; }; _files() { print -rn -- FILES; }; _describe() { print -rn -- DESCRIBE; }; compdef() { :; }`;
    const got = offers('zsh', (c) => `words=(${quoted(c.words)} ''); CURRENT=${c.words.length + 1}; _router; print`, `${stubs}\nsource ${join(dir, 'zsh')}`);
    cases.forEach((c, i) => expect({ words: c.words, offers: sorted(got[i]!) }).toEqual({ words: c.words, offers: sorted(c.values) }));
  });

  it.skipIf(!has('fish'))('fish offers the values', () => {
    const got = offers('fish', (c) => `echo (complete -C ${JSON.stringify(`${c.words.join(' ')} `)} | string replace -r '\\t.*' '' | string join \\t)`, `source ${join(dir, 'fish')}`);
    cases.forEach((c, i) => expect({ words: c.words, offers: sorted(got[i]!) }).toEqual({ words: c.words, offers: sorted(c.values) }));
  });
});
