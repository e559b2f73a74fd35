import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { commandTree } from '../../src/cli/commands/completion/tree.js';
import { runInProcess } from '../support/inprocess.js';
import { sayWhySkipped } from '../support/skip-reason.js';

// After every flag with a known set of values (and before every argument with one), each shell
// offers exactly those values, never file names: the real bash, zsh and fish run the generated scripts.
interface Case {
  words: string[];
  values: readonly string[];
}
let dir: string;
let cases: Case[];
const has = (shell: string) => !sayWhySkipped(spawnSync(shell, ['-c', 'exit 0']).status !== 0, `${shell} is not installed: its completion tests skip (bash scripts/test-tools.sh installs it)`);

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
function offers<C = Case>(shell: string, script: (c: C) => string, prelude: string, all: C[] = cases as C[]): string[][] {
  const body = `${prelude}\n${all.map(script).join('\n')}\n`;
  const r = spawnSync(shell, shell === 'bash' ? ['--norc', '--noprofile', '-c', body] : shell === 'zsh' ? ['-f', '-c', body] : ['--no-config', '-c', body], { cwd: dir, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').slice(0, all.length).map((l) => (l ? l.split('\t').filter(Boolean) : []));
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

// A global flag's value is no subcommand: `router -p NAME <Tab>` offers the commands, `router -p NAME chat --<Tab>` chat's
// flags (fish's __fish_use_subcommand took NAME for the command), and a value named like a command is still a value.
describe('completion after a global flag and its value', () => {
  interface After {
    words: string[];
    cur: string;
    path: string;
    /** How bash hands the words over (COMP_WORDBREAKS splits at "="). */
    bashWords?: string[];
  }
  const afters: After[] = [
    { words: ['router', '-p', 'NAME'], cur: '', path: '' },
    { words: ['router', '--profile', 'NAME', 'chat'], cur: '--', path: 'chat' },
    { words: ['router', '-qp', 'NAME'], cur: '', path: '' },
    { words: ['router', '--timeout', '3s', 'config'], cur: '', path: 'config' },
    { words: ['router', '-p', 'chat'], cur: '', path: '' },
    { words: ['router', '--profile=chat'], cur: '', path: '', bashWords: ['router', '--profile', '=', 'chat'] },
    { words: ['router', '-pchat', 'config'], cur: '', path: 'config' },
  ];
  let expected: string[][];
  beforeAll(async () => {
    const nodes = commandTree(await buildProgram());
    expected = afters.map((a) => {
      const n = nodes.find((x) => x.path === a.path)!;
      const names = a.cur ? n.flags.flatMap((f) => [f.name, f.short].filter(Boolean) as string[]) : n.subcommands.map((s) => s.name);
      return sorted(names.filter((x) => x.startsWith(a.cur) && (a.cur !== '--' || x.startsWith('--'))));
    });
  });
  const check = (got: string[][], keep: (x: string, a: After) => boolean = () => true) =>
    afters.forEach((a, i) => expect({ words: a.words, offers: sorted(got[i]!.filter((x) => keep(x, a))) }).toEqual({ words: a.words, offers: expected[i] }));

  it.skipIf(!has('fish'))('fish', () => {
    check(offers('fish', (a: After) => `echo (complete -C ${JSON.stringify(`${a.words.join(' ')} ${a.cur}`)} | string replace -r '\\t.*' '' | string join \\t)`, `source ${join(dir, 'fish')}`, afters));
  });

  it.skipIf(!has('bash'))('bash', () => {
    const script = (a: After) => {
      const w = a.bashWords ?? a.words;
      return `COMP_WORDS=(${quoted(w)} '${a.cur}'); COMP_CWORD=${w.length}; COMP_LINE=${JSON.stringify(`${a.words.join(' ')} ${a.cur}`)}; COMP_POINT=\${#COMP_LINE}; COMPREPLY=(); _router; (IFS=$'\\t'; echo "\${COMPREPLY[*]}")`;
    };
    check(offers('bash', script, `source ${join(dir, 'bash')}`, afters), (x, a) => a.cur !== '--' || x.startsWith('--'));
  });

  it.skipIf(!has('zsh'))('zsh', () => {
    // _describe prints the names it is given (the real one leaves matching the word to compadd).
    const stubs = `_describe() { local -a a; local n=\${@[-1]}; a=("\${(@P)n}"); a=("\${(@)a%%:*}"); print -rn -- "\${(pj:\\t:)a}"; }; _files() { print -rn -- FILES; }; compdef() { :; }`;
    const got = offers('zsh', (a: After) => `words=(${quoted(a.words)} '${a.cur}'); CURRENT=${a.words.length + 1}; _router; print`, `${stubs}\nsource ${join(dir, 'zsh')}`, afters);
    check(got, (x, a) => x.startsWith(a.cur) && (a.cur !== '--' || x.startsWith('--')));
  });
});

// `--flag=` then Tab: the flag's values, as after `--flag ` (bash hands "=" over as a word of its own; zsh the whole word).
describe('completion of a value after --flag=', () => {
  const BY = ['command', 'day', 'model', 'profile'];
  const lines = [
    { line: 'router usage --by=', bashWords: ['router', 'usage', '--by', '='], offers: BY },
    { line: 'router usage --by=mo', bashWords: ['router', 'usage', '--by', '=', 'mo'], offers: ['model'] },
    { line: 'router --quiet usage --since 7d --by=', bashWords: ['router', '--quiet', 'usage', '--since', '7d', '--by', '='], offers: BY },
  ];

  it.skipIf(!has('bash'))('bash', () => {
    const script = (c: (typeof lines)[number]) =>
      `COMP_WORDS=(${quoted(c.bashWords)}); COMP_CWORD=${c.bashWords.length - 1}; COMP_LINE=${JSON.stringify(c.line)}; COMP_POINT=\${#COMP_LINE}; COMPREPLY=(); _router; (IFS=$'\\t'; echo "\${COMPREPLY[*]}")`;
    const got = offers('bash', script, `source ${join(dir, 'bash')}`, lines);
    lines.forEach((c, i) => expect({ line: c.line, offers: sorted(got[i]!) }).toEqual({ line: c.line, offers: c.offers }));
  });

  it.skipIf(!has('zsh'))('zsh', () => {
    // compset -P moves "--by=" out of the word compadd matches against; the stub keeps what is left to match in $cur.
    const stubs = `compadd() { [[ $1 == -- ]] && shift; print -rn -- "\${(pj:\\t:)@}"; }; compset() { :; }; _files() { print -rn -- FILES; }; _describe() { print -rn -- DESCRIBE; }; _message() { print -rn -- MESSAGE; }; compdef() { :; }`;
    const got = offers('zsh', (c: (typeof lines)[number]) => `words=(${c.line.split(' ').map((w) => `'${w}'`).join(' ')}); CURRENT=${c.line.split(' ').length}; _router; print`, `${stubs}\nsource ${join(dir, 'zsh')}`, lines);
    lines.forEach((c, i) => {
      const cur = c.line.split('=').pop()!;
      expect({ line: c.line, offers: sorted(got[i]!.filter((x) => x.startsWith(cur))) }).toEqual({ line: c.line, offers: c.offers });
    });
  });

  it.skipIf(!has('fish'))('fish', () => {
    const got = offers('fish', (c: (typeof lines)[number]) => `echo (complete -C ${JSON.stringify(c.line)} | string replace -r '\\t.*' '' | string join \\t)`, `source ${join(dir, 'fish')}`, lines);
    lines.forEach((c, i) => expect({ line: c.line, offers: sorted(got[i]!.map((x) => x.replace(/^--by=/, ''))) }).toEqual({ line: c.line, offers: c.offers }));
  });
});
