import { execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';

const ROOT = resolve(BIN, '..', '..');
const require = createRequire(import.meta.url);

/** What loadBundle() of a checkout's bin/router.cjs gives, seen from a fresh node. */
function loadBundle(root: string): { main: string; rejected: boolean | null } {
  const code = `const b = require(${JSON.stringify(join(root, 'bin', 'router.cjs'))}).loadBundle();
    process.stdout.write(JSON.stringify({ main: typeof b?.main, rejected: b ? b.script.cachedDataRejected : null }));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', code], { encoding: 'utf8', env: { PATH: process.env.PATH } }));
}

/** A copy of the checkout's built package (its dependencies linked), to damage or change. */
function copyCheckout(copy: string): string {
  cpSync(join(ROOT, 'bin'), join(copy, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true, preserveTimestamps: true });
  cpSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}

describe('the CLI bundle (scripts/bundle.mjs, bin/router.cjs)', () => {
  let t: TestEnv;
  let dir: string;
  beforeAll(async () => {
    t = await startTestEnv();
    dir = mkdtempSync(join(tmpdir(), 'router-bundle-test-'));
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is what bin/router.cjs runs, from a code cache a fresh node takes', () => {
    expect(loadBundle(ROOT)).toEqual({ main: 'function', rejected: false });
  });

  it('leaves out what no command started from it runs: the emulator (router serve starts from the modules) and the editor prompt', async () => {
    // The pack and every chunk (scripts/bundle-split.mjs).
    const chunks = join(ROOT, 'dist', 'cli.chunks');
    const whole = [join(ROOT, 'dist', 'cli.bundle.cjs'), ...readdirSync(chunks).filter((name) => name.endsWith('.cjs')).map((name) => join(chunks, name))].map((file) => readFileSync(file, 'latin1')).join('\n');
    for (const absent of ['Mp3Encoder', 'defineRoutes', 'node_modules/iconv-lite/', 'node_modules/@inquirer/editor/']) expect(whole).not.toContain(absent);
    for (const present of ['the emulator is not in the CLI bundle', 'node_modules/@inquirer/password/', 'node_modules/@inquirer/confirm/', 'node_modules/@inquirer/input/']) expect(whole).toContain(present);
    expect(readdirSync(chunks).some((name) => /^serve-\w+\.cjs$/.test(name))).toBe(true);
    const serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--state', join(dir, 'serve-state'), '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const [line] = await once(serve.stdout!.setEncoding('utf8'), 'data');
    expect(JSON.parse(String(line).split('\n')[0]).api_root).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
    serve.kill('SIGTERM');
    expect((await once(serve, 'exit'))[0]).toBe(0);
  });

  it('runs a one-shot chat from the pack alone, another command with its chunks; a chunk missing or of another build is one error line with the fix', async () => {
    const trace = { ROUTER_TRACE_START: '1', ROUTER_NO_LOG: '1', XDG_CACHE_HOME: join(dir, 'no-own-cache') };
    const chat = await t.run(['chat', '--model', 'local/echo', 'packed'], { env: trace });
    expect(chat.stdout).toBe('packed\n');
    expect(chat.stderr).toBe('router: started from the bundle and its code cache\n');
    // As users run it: its ledger line and conversation kept, its folders found from HOME.
    const home = { HOME: join(dir, 'user-home'), ROUTER_NO_LOG: undefined, ROUTER_CONFIG_DIR: undefined, ROUTER_STATE_DIR: undefined, XDG_CONFIG_HOME: undefined, XDG_STATE_HOME: undefined };
    const logged = await t.run(['chat', '--model', 'local/echo', 'logged'], { env: { ...trace, ...home } });
    expect(logged.stdout).toBe('logged\n');
    expect(logged.stderr).toBe('router: started from the bundle and its code cache\n');
    expect(readdirSync(join(dir, 'user-home', '.local', 'state', 'router'))).toEqual(expect.arrayContaining(['conversations', 'usage.jsonl']));
    const models = await t.run(['models'], { env: trace });
    expect(models.code).toBe(0);
    const [first, ...loaded] = models.stderr.trim().split('\n');
    expect(first).toBe('router: started from the bundle and its code cache');
    expect(loaded.some((line) => /^router: loaded models-\w+\.js and its code cache$/.test(line))).toBe(true);
    const copy = copyCheckout(join(dir, 'checkout-chunks'));
    const chunk = join(copy, 'dist', 'cli.chunks', readdirSync(join(copy, 'dist', 'cli.chunks')).find((name) => /^models-\w+\.cjs$/.test(name))!);
    const models2 = () => promisify(execFile)(process.execPath, [join(copy, 'bin', 'router.cjs'), 'models'], { encoding: 'utf8', env: { ...process.env, ...t.env } }).then(() => ({ code: 0, stderr: '' }), (err: { code: number; stderr: string }) => err);
    writeFileSync(chunk, readFileSync(chunk, 'latin1').replace(/^\/\* router \w+ \*\//, '/* router 0000 */'), 'latin1');
    const stale = await models2();
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^error: \S+models-\w+\.cjs is of another build than \S+cli\.bundle\.cjs: run "npm run build" in the package's folder\n$/);
    rmSync(chunk);
    const missing = await models2();
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: \S+models-\w+\.cjs is missing, unlike \S+cli\.bundle\.cjs: run "npm run build" in the package's folder\n$/);
  });

  it('packs no code of which a one-shot chat runs only the top level: such a chunk is required where first used, and its top level only declares', () => {
    const pack = readFileSync(join(ROOT, 'dist', 'cli.bundle.cjs'), 'latin1');
    // Attachments, tool calls, budget holds: a one-shot chat without them ran only these modules' top level.
    for (const deferred of ['MAX_ATTACHMENT_BYTES=', 'DEFAULT_RESULTS_BYTES=', 'HOLD_MAX_AGE_MS=']) expect(pack).not.toContain(deferred);
    const chunks = join(ROOT, 'dist', 'cli.chunks');
    const lazy = new Set([pack, ...readdirSync(chunks).filter((name) => name.endsWith('.cjs')).map((name) => readFileSync(join(chunks, name), 'latin1'))].flatMap((code) => [...code.matchAll(/\(import_[\w$]+\?\?=require\("\.\/([^"]+)\.js"\)\)/g)].map((m) => m[1]!)));
    expect(lazy.size).toBeGreaterThan(10);
    // Deferred, a chunk's top level runs later or never: it must do nothing a caller could miss (a listener, a registration).
    const effects = [...lazy].flatMap((name) => {
      const file = join(chunks, `${name}.cjs`);
      let code: string;
      try {
        code = readFileSync(file, 'latin1');
      } catch {
        return []; // loaded by a one-shot all the same: in the pack
      }
      const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
      const wrapper = (source.statements[0] as ts.ExpressionStatement).expression as ts.ParenthesizedExpression;
      const body = (wrapper.expression as ts.FunctionExpression).body.statements;
      const plumbing = /^("use strict"|__export\(|module\.exports=)/;
      const declares = (st: ts.Statement) => ts.isVariableStatement(st) || ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || (ts.isExpressionStatement(st) && plumbing.test(st.getText(source)));
      return body.filter((st) => !declares(st)).map((st) => `${name}: ${st.getText(source).slice(0, 80)}`);
    });
    expect(effects).toEqual([]);
  });

  it('runs a one-shot chat without loading what the CLI defers: HTTP/2, child processes, crypto, node:module; no TextDecoder', async () => {
    const preload = join(dir, 'modules.cjs');
    const list = join(dir, 'modules.json');
    // TextDecoder's module is loaded by node itself: its class, taken, says so on stderr.
    const told = `const d = Object.getOwnPropertyDescriptor(globalThis, 'TextDecoder');
Object.defineProperty(globalThis, 'TextDecoder', { configurable: true, get() { process.stderr.write('TextDecoder taken\\n'); return d.get ? d.get.call(this) : d.value; } });`;
    writeFileSync(preload, `${told}\nprocess.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(process.moduleLoadList)));`);
    const r = await t.run(['chat', '--model', 'local/echo', 'hi there'], { env: { NODE_OPTIONS: `--require ${preload}`, ROUTER_NO_LOG: '1' } });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('hi there\n');
    const loaded: string[] = JSON.parse(readFileSync(list, 'utf8'));
    expect(loaded).toContain('NativeModule net');
    for (const name of ['http2', 'child_process', 'crypto', 'module']) expect(loaded).not.toContain(`NativeModule ${name}`);
  });

  it('loads node:os, node:net and node:tty before it sets its V8 flag for a chat: node\'s code cache for them is taken then', async () => {
    const preload = join(dir, 'modules-order.cjs');
    const list = join(dir, 'modules-order.json');
    writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(process.moduleLoadList)));`);
    const r = await t.run(['chat', '--model', 'local/echo', 'in order'], { env: { NODE_OPTIONS: `--require ${preload}`, ROUTER_NO_LOG: '1' } });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('in order\n');
    const loaded: string[] = JSON.parse(readFileSync(list, 'utf8'));
    for (const name of ['os', 'net', 'tty']) {
      expect(loaded.indexOf(`NativeModule ${name}`)).toBeGreaterThan(-1);
      expect(loaded.indexOf(`NativeModule ${name}`)).toBeLessThan(loaded.indexOf('NativeModule v8'));
    }
  });

  it('warms undici\'s parser while the answer comes', () => {
    // scripts/bundle-plugins.mjs (warmParser) found where undici makes its parser: one empty parse follows.
    expect(readFileSync(join(ROOT, 'dist', 'cli.bundle.cjs'), 'latin1')).toMatch(/llhttpInstance=lazyllhttp\(\),setImmediate\(\w+=>\{let \w+=\w+\.llhttp_alloc\(0\);\w+\.llhttp_execute\(\w+,0,0\),\w+\.llhttp_free\(\w+\)\},llhttpInstance\.exports\)/);
  });

  it('imports node builtins as ES modules without copying their exports: a namespace reads them live through its prototype', () => {
    // esbuild's __toESM made a getter per export (node:fs, node:process: ~100 each) at every import: ~200 KB a chat.
    const chunks = join(ROOT, 'dist', 'cli.chunks');
    const pack = readFileSync(join(ROOT, 'dist', 'cli.bundle.cjs'), 'latin1');
    const whole = [pack, ...readdirSync(chunks).filter((name) => name.endsWith('.cjs')).map((name) => readFileSync(join(chunks, name), 'latin1'))].join('\n');
    expect(whole).not.toMatch(/__toESM\(require\("node:/);
    expect(pack).toContain('__nodeNamespace(require("node:process"))');
    const helper = /var __nodeNamespace=[^;]+;/.exec(pack)![0];
    const namespace = new Function(`${helper} return __nodeNamespace;`)() as (m: object) => Record<string, unknown>;
    const fs = namespace(require('node:fs'));
    expect(fs.default).toBe(require('node:fs'));
    expect(fs.readFileSync).toBe(readFileSync);
    expect(Object.keys(fs)).toEqual(['default']);
    const proc = namespace(process);
    const before = process.exitCode;
    process.exitCode = 7;
    expect(proc.exitCode).toBe(7);
    process.exitCode = before;
    expect(proc.env).toBe(process.env);
  });

  it('keeps the ledger line and the conversation of a one-shot chat without node:crypto or the folder remover', async () => {
    const preload = join(dir, 'modules-log.cjs');
    const list = join(dir, 'modules-log.json');
    const state = join(dir, 'log-state');
    writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(process.moduleLoadList)));`);
    const r = await t.run(['chat', '--model', 'local/echo', 'kept'], { env: { NODE_OPTIONS: `--require ${preload}`, ROUTER_STATE_DIR: state } });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('kept\n');
    expect(JSON.parse(readFileSync(join(state, 'usage.jsonl'), 'utf8')).command).toBe('chat');
    const [saved] = readdirSync(join(state, 'conversations')).filter((name) => name.endsWith('.json'));
    expect(saved).toMatch(/^c_\d{8}_[0-9a-f]{6}\.json$/);
    const loaded: string[] = JSON.parse(readFileSync(list, 'utf8'));
    for (const name of ['crypto', 'internal/fs/rimraf']) expect(loaded).not.toContain(`NativeModule ${name}`);
  });

  it('runs a command that makes no request without node:tty or node:module', async () => {
    const preload = join(dir, 'modules-offline.cjs');
    const list = join(dir, 'modules-offline.json');
    writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(process.moduleLoadList)));`);
    const out = join(dir, 'config-list.txt');
    const r = await t.run(['config', 'list'], { env: { NODE_OPTIONS: `--require ${preload}` }, stdinPath: '/dev/null', stdoutPath: out });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const loaded: string[] = JSON.parse(readFileSync(list, 'utf8'));
    for (const name of ['tty', 'module']) expect(loaded).not.toContain(`NativeModule ${name}`);
  });

  it('reads a prompt from a file or /dev/null given as stdin without file streams, node:fs/promises, perf_hooks or node:assert', async () => {
    const preload = join(dir, 'modules-stdin.cjs');
    const list = join(dir, 'modules-stdin.json');
    const prompt = join(dir, 'prompt.txt');
    writeFileSync(prompt, 'from a file\n');
    writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(process.moduleLoadList)));`);
    const env = { NODE_OPTIONS: `--require ${preload}`, ROUTER_NO_LOG: '1' };
    for (const [stdinPath, said] of [[prompt, 'from a file\n\nhi'], ['/dev/null', 'hi']]) {
      const r = await t.run(['chat', '--model', 'local/echo', 'hi'], { env, stdinPath });
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(`${said}\n`);
      const loaded: string[] = JSON.parse(readFileSync(list, 'utf8'));
      for (const name of ['internal/fs/streams', 'internal/fs/promises', 'perf_hooks', 'assert']) expect(loaded).not.toContain(`NativeModule ${name}`);
    }
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
