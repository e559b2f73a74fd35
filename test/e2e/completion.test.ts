import { chmodSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';
import { sayWhySkipped } from '../support/skip-reason.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';
import { waitBound } from '../support/until.js';

// Completions pressed with Tab in the real shells (bash, zsh, fish from Debian's packages).
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const has = (shell: string) => HAS_TMUX && !sayWhySkipped(spawnSync(shell, ['-c', 'exit 0']).status !== 0, `${shell} is not installed: its completion tests skip (bash scripts/test-tools.sh installs it)`);

let t: TestEnv;
let env: Record<string, string>;
let batchId: string;
let jobId: string;

beforeAll(async () => {
  t = await startTestEnv();
  const bin = join(t.dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'router'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'router'), 0o755);
  // A workspace of its own, holding exactly one batch, so that the batch id completes in full.
  const ws = await t.admin('workspaces', {});
  env = { ...t.env, ROUTER_API_KEY: ws.api_key, PATH: `${bin}:${process.env.PATH}`, HOME: t.dir };
  const file = join(t.dir, 'one.jsonl');
  writeFileSync(file, JSON.stringify({ custom_id: 'a', body: { model: 'local/echo', messages: [{ role: 'user', content: 'x' }] } }));
  batchId = (await t.run(['batch', 'create', file], { env })).stdout.trim();
  // The job's batch goes to another workspace (job ids come from this machine's job records).
  const other = await t.admin('workspaces', {});
  jobId = (await t.run(['batch', 'run', file], { env: { ...env, ROUTER_API_KEY: other.api_key } })).stdout.trim();
  expect((await t.run(['login', '--with-key', '--profile', 'zebra', '--no-verify'], { input: ws.api_key, env })).code).toBe(0);
});
afterAll(() => t.close());

const SHELLS: [string, string[], string][] = [
  ['bash', ['bash', '--norc', '--noprofile'], `source ${join(ROOT, 'completions', 'router.bash')}`],
  ['zsh', ['zsh', '-f'], `autoload -U compinit && compinit -u && source ${join(ROOT, 'completions', '_router')}`],
  // fish's own prompt (user@host) would read as the marker: the same bare prompt as the other shells.
  ['fish', ['fish', '--no-config'], `function fish_prompt; echo -n '$ '; end; source ${join(ROOT, 'completions', 'router.fish')}`],
];

// The three shells at once (each its own tmux server); the steps in one shell one after another.
for (const [name, shell, setup] of SHELLS) {
  describe.skipIf(!has(name)).concurrent(`${name} completions`, () => {
    describe.sequential('in one terminal', () => {
      let term: Terminal;
      beforeAll(async () => {
        term = new Terminal(env, shell);
        term.run(setup);
        term.run('echo READY');
        await term.waitFor(/^READY/m);
      });
      afterAll(() => term?.close());

      /** Types `line`, presses Tab, types a marker, and returns what the line became; `expected`, what it should become. */
      const tab = async (line: string, expected: string): Promise<string> => {
        term.run('clear');
        // Only the prompt on the screen before the next line is typed: keys typed while `clear` still runs are echoed by
        // the terminal and then again by the shell's line editor.
        await term.waitFor(/^\s*\$\s*$/);
        term.type(line);
        await term.waitFor(new RegExp(line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').trimEnd()));
        term.keys('Tab');
        // Wait for the line to change (the shell may ask the service), then mark where it ends.
        const start = line.split(' ').slice(0, 2).join(' ');
        const current = async () => {
          const row = (await term.screen()).split('\n').filter((l) => l.includes(start)).at(-1) ?? '';
          return row.slice(row.indexOf('router')).trimEnd();
        };
        if (expected.trimEnd() !== line.trimEnd()) {
          // Until the line is what it should become (bounded by the rest of the test's bound): a completion that asks
          // the service starts a router, which a loaded machine took over 5 s to do, the bound this wait had.
          for (const end = Date.now() + waitBound(); Date.now() < end && (await current()) !== expected.trimEnd(); ) await new Promise((r) => setTimeout(r, 50));
        } else {
          // A line that should stay as it is: looked at for 5 s, or until it changes (a failure). Absence has no event to
          // wait for: a slower machine can only let a defect pass here, never fail a sound completion.
          for (const until = Date.now() + 5000; Date.now() < until && (await current()) === line.trimEnd(); ) await new Promise((r) => setTimeout(r, 150));
        }
        term.type('@');
        const screen = await term.waitFor(/@/);
        // The shell's fresh prompt before anything else is typed: keys that arrive while it handles the interrupt can be
        // lost or land on the abandoned line. On a loaded machine a shell busy redrawing can miss the key: press it again.
        for (let attempt = 1; ; attempt++) {
          term.keys('C-c');
          try {
            await term.waitFor(/(^|\n)\$\s*$/, 3000);
            break;
          } catch (err) {
            if (attempt === 3) throw err;
          }
        }
        const row = screen.split('\n').find((l) => l.includes('@'))!;
        return row.slice(row.indexOf('router')).replace(/@.*$/, '');
      };

      /** Presses Tab after `line`: it becomes `expected`. */
      const completes = async (line: string, expected: string) => expect(await tab(line, expected)).toBe(expected);

      it('subcommands, flags and their allowed values', async () => {
        await completes('router ba', 'router batch ');
        await completes('router chat --serv', 'router chat --service-tier ');
        await completes('router chat --service-tier ul', 'router chat --service-tier ultrafast ');
        await completes('router completion z', 'router completion zsh ');
      });

      it('live values: batch ids, job ids, profile names, setting names, model ids from the service', async () => {
        await completes('router batch get ', `router batch get ${batchId} `);
        await completes('router batch job ', `router batch job ${jobId} `);
        await completes('router batch run --resume ', `router batch run --resume ${jobId} `);
        await completes('router --profile ze', 'router --profile zebra ');
        await completes('router config use ze', 'router config use zebra ');
        await completes('router config set monthly_', 'router config set monthly_budget ');
        await completes('router chat --model local/ec', 'router chat --model local/echo ');
      });

      it('files after a flag that takes a file, none after one that takes a voice or a number', async () => {
        // one.jsonl is the only file in t.dir starting "on".
        term.run(`cd ${t.dir}`);
        await completes('router speak -o on', 'router speak -o one.jsonl ');
        await completes('router chat --attach on', 'router chat --attach one.jsonl ');
        // A flag whose file is optional (--results [file]) too.
        await completes('router batch get x --results on', 'router batch get x --results one.jsonl ');
        await completes('router speak --voice on', 'router speak --voice on');
        await completes('router chat --temperature on', 'router chat --temperature on');
      });
    });
  });
}
