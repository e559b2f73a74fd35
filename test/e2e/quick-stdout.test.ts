import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../helpers.js';

// `router --version` and the root help off a terminal (bin/router.cjs -> quick.cjs) write to stdout's
// descriptor: process.stdout, a stream over it, would load node's streams and net to say one line.
describe('--version and the root help write stdout without process.stdout', () => {
  let dir: string;
  let preload: string;
  let list: string;
  const version = JSON.parse(readFileSync(join(BIN, '..', '..', 'package.json'), 'utf8')).version as string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'router-quick-stdout-'));
    list = join(dir, 'modules.json');
    preload = join(dir, 'modules.cjs');
    writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(process.moduleLoadList)));`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const streamModules = () => (JSON.parse(readFileSync(list, 'utf8')) as string[]).filter((m) => /^NativeModule (net|stream|internal\/streams\/writable)$/.test(m));

  it.each([
    [['--version'], 'a pipe'],
    [['-V'], 'a file'],
    [['--help'], 'a pipe'],
    [['-h'], 'a file'],
  ])('router %j to %s: the answer, and no stream module loaded', async (args, to) => {
    const out = join(dir, 'out.txt');
    const r = await runCli(args, { env: { NODE_OPTIONS: `--require ${preload}` }, stdoutPath: to === 'a file' ? out : undefined });
    expect([r.code, r.stderr]).toEqual([0, '']);
    const text = to === 'a file' ? readFileSync(out, 'utf8') : r.stdout;
    if (args[0]!.startsWith('-V') || args[0] === '--version') expect(text).toBe(`${version}\n`);
    else expect(text).toMatch(/^Usage: router \[options\] \[command\]\n[\s\S]*\nExit codes: 0 ok/);
    expect(streamModules()).toEqual([]);
  });

  it('says a stdout that takes nothing (a full disk) as every command does', async () => {
    for (const args of [['--version'], ['--help']]) {
      const r = await runCli(args, { stdoutPath: '/dev/full' });
      expect([r.code, r.stderr]).toEqual([1, 'error: cannot write stdout: disk full\n']);
    }
  });
});
