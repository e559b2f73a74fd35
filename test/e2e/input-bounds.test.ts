import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';
import { openByAny, until } from '../support/until.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';

// Input without an end (/dev/zero), larger than any request, or a line longer than a batch:
// one line, exit 2, nothing sent, and never all of memory or disk. Here what needs a process: a
// stdin without end, Ctrl-C in a terminal (files named by a flag: test/inprocess/input-bounds).
let t: TestEnv;
let big: string;
let oneLine: string;
beforeAll(async () => {
  t = await startTestEnv();
  // Sparse files: 300 MiB of NUL bytes at no cost of disk.
  big = join(t.dir, 'big.json');
  writeFileSync(big, '');
  truncateSync(big, 300 * 1024 * 1024);
  oneLine = join(t.dir, 'one-line.jsonl');
  writeFileSync(oneLine, '');
  truncateSync(oneLine, 300 * 1024 * 1024);
});
afterAll(() => t.close());

const posts = () => t.requests().filter((r) => r.method === 'POST').length;
const TOO_MUCH = (what: string) => `error: ${what} holds more than 200 MB, more than any request of the service takes; nothing was sent\n`;

describe('an input without end or over the bound is refused, nothing sent', () => {
  const cases: [string, string[], string | undefined, string][] = [
    ['chat < /dev/zero', ['chat', '--model', 'local/echo'], '/dev/zero', 'stdin'],
    ['embed < /dev/zero', ['embed', '--model', 'local/embed'], '/dev/zero', 'stdin'],
    ['config set api_key < /dev/zero', ['config', 'set', 'api_key'], '/dev/zero', 'stdin'],
    ['login --with-key < /dev/zero', ['login', '--with-key', '--no-verify'], '/dev/zero', 'stdin'],
  ];
  for (const [name, args, stdinPath, what] of cases) {
    it(name, async () => {
      const before = posts();
      const r = await t.run(args, { stdinPath });
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: TOO_MUCH(what) });
      expect(posts()).toBe(before);
    });
  }

  it.skipIf(process.platform !== 'linux')('a device that is not there (/dev/tty without a terminal) is said in words, exit 2', () => {
    const before = posts();
    // setsid: a session of its own, so no terminal, whatever runs the tests.
    for (const flag of ['--attach', '--schema']) {
      const r = spawnSync('setsid', ['-w', process.execPath, BIN, 'chat', '--model', 'local/echo', flag, '/dev/tty', 'hi'], { env: { ...process.env, ...t.env }, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
      expect({ code: r.status, stderr: r.stderr }).toEqual({ code: 2, stderr: `error: ${flag} /dev/tty: cannot read it (no such device, or no terminal)\n` });
    }
    expect(posts()).toBe(before);
  });
});
describe('batch input', () => {
  it('batch create - < /dev/zero stops spooling past twice a batch, and leaves no spool', async () => {
    // A temp folder of its own: other files running at once spool into the shared one.
    const tmp = join(t.dir, 'tmp-spool');
    mkdirSync(tmp);
    const spools = () => readdirSync(tmp).filter((n) => n.startsWith('router-batch-stdin-'));
    const r = await t.run(['batch', 'create', '-'], { stdinPath: '/dev/zero', env: { TMPDIR: tmp } });
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toBe('error: stdin holds more than 400 MB, more than one batch takes: save it to a file and run "router batch run FILE", which splits it\n');
    expect(spools()).toEqual([]);
  });

});
describe.skipIf(!HAS_TMUX)('Ctrl-C while an input is awaited', () => {
  let term: Terminal | undefined;
  afterAll(() => term?.close());

  it('a named pipe no one writes to: Ctrl-C ends it at once, exit 130', async () => {
    const fifo = join(t.dir, 'requests.fifo');
    execFileSync('mkfifo', [fifo]);
    term = new Terminal(t.env);
    term.run(`node ${BIN} api POST /v1/chat/completions --input ${fifo}`);
    // The command is up and waiting on the pipe (it has opened it) before the key.
    expect(await until(() => openByAny(fifo))).toBe(true);
    term.keys('C-c');
    await term.waitFor(/error: interrupted/);
    expect(await term.lastExit()).toBe(130);
  });

});
