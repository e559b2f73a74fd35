/** How the CLI bundle starts and ends: exit through process.exit, the quick --version path, its own code caches for another node or V8 flags, damaged caches and builds left aside. */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BIN, type TestEnv } from '../helpers.js';
import { copyCheckout, envAndFolderForAll, loadBundle, ROOT } from '../support/bundle-checkout.js';

describe('the CLI bundle (scripts/bundle.mjs, bin/router.cjs)', () => {
  let t: TestEnv;
  let dir: string;
  envAndFolderForAll((env, folder) => {
    t = env;
    dir = folder;
  });


  it('ends once nothing is left to do through process.exit (no heap teardown): exit listeners run, output to a slow reader arrives whole', async () => {
    // process.exit() calls process.reallyExit; a process that ends by itself (node's teardown) does not.
    const preload = join(dir, 'exit-path.cjs');
    const seen = join(dir, 'exit-path.json');
    writeFileSync(preload, `const fs = require('node:fs'); const real = process.reallyExit;
      process.reallyExit = function (code) { fs.appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ reallyExit: code }) + '\\n'); return real.call(this, code); };
      process.on('exit', (code) => fs.appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ exitEvent: code }) + '\\n'));`);
    const lines = () => readFileSync(seen, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    // 300 KB of prompt, echoed, to a reader that takes each chunk a turn of its event loop later.
    const prompt = 'x'.repeat(99).concat('\n').repeat(3000);
    const child = spawn(process.execPath, [BIN, 'chat', '--model', 'local/echo'], { env: { ...process.env, ...t.env, NODE_OPTIONS: `--require ${preload}`, ROUTER_NO_LOG: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin!.end(prompt);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = once(child, 'close');
    let bytes = 0;
    for await (const chunk of child.stdout!) {
      bytes += (chunk as Buffer).length;
      await new Promise((r) => setImmediate(r));
    }
    expect((await exited)[0]).toBe(0);
    expect(stderr).toBe('');
    expect(bytes).toBe(prompt.length);
    expect(lines()).toEqual([{ exitEvent: 0 }, { reallyExit: 0 }]);
    // A failing call too: its exit code, through the same path.
    rmSync(seen);
    const bad = await t.run(['chat', '--model', 'local/no-such-model', 'hi'], { env: { NODE_OPTIONS: `--require ${preload}`, ROUTER_NO_LOG: '1' } });
    expect(bad.code).not.toBe(0);
    expect(lines()).toEqual([{ exitEvent: bad.code }, { reallyExit: bad.code }]);
  });

  it('answers --version and the root help off a terminal without starting node\'s ES module loader; a stale quick.cjs is left aside', async () => {
    const preload = join(dir, 'modules-quick.cjs');
    const list = join(dir, 'modules-quick.json');
    writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(process.moduleLoadList)));`);
    const env = { NODE_OPTIONS: `--require ${preload}` };
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
    for (const [args, out] of [[['--version'], `${version}\n`], [['--help'], /^Usage: router \[options\] \[command\]\n/]] as const) {
      const r = await t.run([...args], { env });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(out);
      expect(JSON.parse(readFileSync(list, 'utf8'))).not.toContain('NativeModule internal/modules/esm/module_job');
    }
    const copy = copyCheckout(join(dir, 'checkout-quick'));
    // A bare tsc since the build writes quick.js without the build id.
    const quickJs = join(copy, 'dist', 'cli', 'quick.js');
    writeFileSync(quickJs, readFileSync(quickJs, 'utf8').replace(/^\/\* router build \w+ \*\/\n/, ''));
    const stale = execFileSync(process.execPath, [join(copy, 'bin', 'router.cjs'), '--version'], { encoding: 'utf8', env: { PATH: process.env.PATH, NODE_OPTIONS: `--require ${preload}` } });
    expect(stale).toBe(`${version}\n`);
    expect(JSON.parse(readFileSync(list, 'utf8'))).toContain('NativeModule internal/modules/esm/module_job');
  });

  /** A copy of the package whose build made its code caches for another node's version (an installed package, run by the user's node). */
  function otherNodeCopy(name: string) {
    const copy = copyCheckout(join(dir, name));
    const foreign = (file: string) => file.replace(process.version, 'v0.0.0');
    for (const folder of [join(copy, 'dist'), join(copy, 'dist', 'cli.chunks')]) {
      for (const file of readdirSync(folder).filter((n) => n.endsWith(`.${process.version}.cache`))) renameSync(join(folder, file), join(folder, foreign(file)));
    }
    const home = join(dir, `${name}-home`);
    const run = async (args: string[], env: Record<string, string> = {}) => {
      const call = promisify(execFile)(process.execPath, [join(copy, 'bin', 'router.cjs'), ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: home, ...t.env, XDG_CACHE_HOME: '', ROUTER_NO_LOG: '1', ROUTER_TRACE_START: '1', ...env } });
      call.child.stdin?.end();
      return call;
    };
    return { copy, home, own: join(home, '.cache', 'router', 'code'), run };
  }

  it('on a node the build made no code cache for, makes one of its own in the user\'s cache folder, never in the package', async () => {
    const { copy, home, run } = otherNodeCopy('other-node');
    const listing = () => JSON.stringify([readdirSync(join(copy, 'dist')), readdirSync(join(copy, 'dist', 'cli.chunks'))]);
    const before = listing();
    const first = await run(['chat', '--model', 'local/echo', 'first']);
    expect([first.stdout, first.stderr]).toEqual(['first\n', 'router: started from the bundle\n']);
    const own = join(home, '.cache', 'router', 'code');
    expect(readdirSync(own)).toEqual([expect.stringMatching(new RegExp(`^cli\\.bundle\\.\\w+\\.${process.version.replace(/\./g, '\\.')}\\.${process.arch}\\.cache$`))]);
    const second = await run(['chat', '--model', 'local/echo', 'second']);
    expect([second.stdout, second.stderr]).toEqual(['second\n', 'router: started from the bundle and its code cache (made on this machine)\n']);
    // A command with chunks: theirs too, the next call from them.
    expect((await run(['models'])).stderr).toMatch(/^router: loaded models-\w+\.js$/m);
    expect((await run(['models'])).stderr).toMatch(/^router: loaded models-\w+\.js and its code cache \(made on this machine\)$/m);
    expect(readdirSync(own).some((name) => /^chunk\.\w+\.models-\w+\.js\./.test(name))).toBe(true);
    // XDG_CACHE_HOME moves it; a folder that can't be made means no cache, and the call as before.
    const xdg = join(dir, 'other-node-xdg');
    await run(['chat', '--model', 'local/echo', 'x'], { XDG_CACHE_HOME: xdg });
    expect(readdirSync(join(xdg, 'router', 'code'))).toHaveLength(1);
    const nowhere = await run(['chat', '--model', 'local/echo', 'nowhere'], { HOME: '/dev/null/home' });
    expect([nowhere.stdout, nowhere.stderr]).toEqual(['nowhere\n', 'router: started from the bundle\n']);
    expect(listing()).toBe(before);
  });

  it('takes its own code cache damaged in place as no cache (V8 alone would stop at a fatal error), and prunes old builds\' caches', async () => {
    const { own, run } = otherNodeCopy('damaged-own');
    await run(['chat', '--model', 'local/echo', 'first']);
    const [made] = readdirSync(own);
    const bytes = readFileSync(join(own, made!));
    for (let i = 256; i < bytes.length; i += 97) bytes[i]! ^= 0xff; // same length: V8 checks lengths, not bytes
    writeFileSync(join(own, made!), bytes);
    const damaged = await run(['chat', '--model', 'local/echo', 'still runs']);
    expect([damaged.stdout, damaged.stderr]).toEqual(['still runs\n', 'router: started from the bundle (its code cache rejected)\n']);
    // Made again; another build's cache from long ago (an upgrade) is removed then, a recent one kept.
    const old = join(own, 'cli.bundle.0ld0ld0ld0ld0ld0.v0.0.0.x64.cache');
    const recent = join(own, 'cli.bundle.0ther0ther0ther0.v0.0.0.x64.cache');
    writeFileSync(old, 'x');
    writeFileSync(recent, 'x');
    utimesSync(old, new Date(Date.now() - 40 * 86_400_000), new Date(Date.now() - 40 * 86_400_000));
    rmSync(join(own, made!));
    await run(['chat', '--model', 'local/echo', 'again']);
    expect(readdirSync(own).sort()).toEqual([recent.slice(own.length + 1), made].sort());
    expect((await run(['chat', '--model', 'local/echo', 'taken'])).stderr).toBe('router: started from the bundle and its code cache (made on this machine)\n');
  });

  it('on the build\'s node under V8 flags that reject the build\'s caches (NODE_OPTIONS), starts from its own after one call', async () => {
    const { copy, run } = otherNodeCopy('flagged');
    for (const folder of [join(copy, 'dist'), join(copy, 'dist', 'cli.chunks')]) {
      for (const file of readdirSync(folder).filter((n) => n.endsWith('.v0.0.0.cache'))) renameSync(join(folder, file), join(folder, file.replace('v0.0.0', process.version)));
    }
    const flagged = { NODE_OPTIONS: '--max-old-space-size=4000' };
    expect((await run(['chat', '--model', 'local/echo', 'first'], flagged)).stderr).toBe('router: started from the bundle (its code cache rejected)\n');
    expect((await run(['chat', '--model', 'local/echo', 'next'], flagged)).stderr).toBe('router: started from the bundle and its code cache (made on this machine)\n');
    await run(['models'], flagged);
    expect((await run(['models'], flagged)).stderr).toMatch(/^router: loaded models-\w+\.js and its code cache \(made on this machine\)$/m);
    // Calls without the flags take the build's caches still, and the flagged calls their own after them.
    expect((await run(['chat', '--model', 'local/echo', 'plain'])).stderr).toBe('router: started from the bundle and its code cache\n');
    expect((await run(['chat', '--model', 'local/echo', 'again'], flagged)).stderr).toBe('router: started from the bundle and its code cache (made on this machine)\n');
  });

  it('is left aside when damaged, or when dist/cli is of another build (a bare tsc since): the modules run', async () => {
    const copy = copyCheckout(join(dir, 'checkout'));
    expect(loadBundle(copy)).toEqual({ main: 'function', rejected: false });
    const bundle = join(copy, 'dist', 'cli.bundle.cjs');
    const whole = readFileSync(bundle, 'latin1');
    writeFileSync(bundle, whole.slice(0, whole.length >> 1), 'latin1');
    expect(loadBundle(copy)).toEqual({ main: 'undefined', rejected: null });
    writeFileSync(bundle, whole, 'latin1');
    expect(loadBundle(copy)).toEqual({ main: 'function', rejected: false });
    // File times say nothing (unpacking an installed package sets them): a bundle older than the modules is still theirs.
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(copy, 'dist', 'cli', 'main.js'), later, later);
    expect(loadBundle(copy)).toEqual({ main: 'function', rejected: false });
    // A bare tsc since the build writes main.js without the build id: the bundle is of another build.
    const mainJs = join(copy, 'dist', 'cli', 'main.js');
    writeFileSync(mainJs, readFileSync(mainJs, 'utf8').replace(/^\/\* router build \w+ \*\/\n/, ''));
    expect(loadBundle(copy)).toEqual({ main: 'undefined', rejected: null });
    // Not a sync spawn: the emulator answers from this process.
    const call = promisify(execFile)(process.execPath, [join(copy, 'bin', 'router.cjs'), 'chat', '--model', 'local/echo', 'from the modules'], { encoding: 'utf8', env: { ...process.env, ...t.env, ROUTER_NO_LOG: '1' } });
    call.child.stdin?.end();
    expect((await call).stdout).toBe('from the modules\n');
  });
});
