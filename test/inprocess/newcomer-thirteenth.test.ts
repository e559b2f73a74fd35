import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { runProcess } from '../support/run-process.js';
import { BIN } from '../helpers.js';

// Issue 46, round 13: a newcomer's hour with the installed tarball.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('auth migrate --dry-run in a fresh home writes no config file (it made one holding no profile)', async () => {
  const config = join(t.dir, 'fresh-config');
  for (const args of [['auth', 'migrate', '--dry-run'], ['auth', 'migrate', '--dry-run', '--json'], ['auth', 'migrate']]) {
    const r = await run(args, { ROUTER_KEYCHAIN: '', ROUTER_CONFIG_DIR: config });
    expect(r.code).toBe(0);
    expect(existsSync(config)).toBe(false);
    // Was "no key left in …/config.json to move": a file that is not there.
    if (args.join(' ') === 'auth migrate --dry-run') expect(r.stderr).toBe(`no key to move: there is no config file (${join(config, 'config.json')}) yet; router login keeps a key\n`);
  }
  // With a key to move, the dry run still writes nothing to the file it reads.
  expect((await run(['login', '--with-key', '--no-verify'], { ROUTER_CONFIG_DIR: config }, 'sk-rt-v1-notreal0000')).code).toBe(0);
  const file = join(config, 'config.json');
  const before = statSync(file).mtimeMs;
  const r = await run(['auth', 'migrate', '--dry-run'], { ROUTER_KEYCHAIN: '', ROUTER_CONFIG_DIR: config });
  expect(r).toMatchObject({ code: 0, stdout: '' });
  expect(r.stderr).toMatch(/^would move the api_key of profile "default" into .+\n$/);
  expect(statSync(file).mtimeMs).toBe(before);
});

it('a while-read loop over a file without --no-stdin: the first call says that it took the rest of the list', async () => {
  const dir = join(t.dir, 'loop');
  mkdirSync(dir);
  writeFileSync(join(dir, 'files.txt'), 'notes.txt\nreview.txt\n');
  const loop = (flags: string) => runProcess('bash', ['-c', `while read f; do "$ROUTER" chat ${flags} --model local/echo "summarize $f"; done < files.txt`], { cwd: dir, env: { ...process.env, ...t.env, ROUTER: BIN } });
  const r = await loop('');
  // The README's trap: the second file went with the first prompt, and the loop ended. Was said nowhere.
  expect(r).toMatchObject({ status: 0, stdout: 'review.txt\n\nsummarize notes.txt\n' });
  expect(r.stderr).toBe('note: stdin is a file this call read from byte 10 of 21 on, as in a while-read loop over it: the rest went with the prompt, and the loop gets none of it; --no-stdin (or ROUTER_NO_STDIN=1) leaves stdin to the loop\n');
  expect(await loop('--no-stdin')).toMatchObject({ status: 0, stdout: 'summarize notes.txt\nsummarize review.txt\n', stderr: '' });
  expect((await loop('--quiet')).stderr).toBe('');
  // A whole file as stdin (`< notes.txt`) or a pipe is what the user meant: nothing said.
  const whole = await runProcess('bash', ['-c', `"$ROUTER" chat --model local/echo "summarize" < files.txt; printf 'a\\nb\\n' | (read x; "$ROUTER" chat --model local/echo "then")`], { cwd: dir, env: { ...process.env, ...t.env, ROUTER: BIN } });
  expect(whole).toMatchObject({ status: 0, stdout: 'notes.txt\nreview.txt\n\nsummarize\nb\n\nthen\n', stderr: '' });
  // A whole file saved with a byte-order mark (Notepad's UTF-8): the mark's 3 bytes are read and dropped, not left to a loop.
  writeFileSync(join(dir, 'bom.txt'), '\uFEFFnotes.txt\n');
  const bom = await runProcess('bash', ['-c', `"$ROUTER" chat --model local/echo "summarize" < bom.txt`], { cwd: dir, env: { ...process.env, ...t.env, ROUTER: BIN } });
  expect(bom).toMatchObject({ status: 0, stdout: 'notes.txt\n\nsummarize\n', stderr: '' });
});

it('roles edit with an editor that is not installed names it and what to set (was "exited with 127")', async () => {
  const r = await run(['roles', 'edit', 'poet'], { EDITOR: 'no-such-editor-here' });
  expect(r.code).toBe(1);
  expect(r.stderr.split('\n').filter((l) => l.startsWith('error:'))).toEqual(['error: the editor no-such-editor-here (from $EDITOR) was not found: set $VISUAL or $EDITOR to one that is installed (nano, vim, code --wait); role poet is not made']);
});
