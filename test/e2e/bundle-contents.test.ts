/** What the CLI bundle (scripts/bundle.mjs, bin/router.cjs) packs and what a one-shot chat or a plain command loads from it: chunks, deferred builtins, no crypto or tty where not needed. */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { BIN, type TestEnv } from '../helpers.js';
import { copyCheckout, envAndFolderForAll, loadBundle, ROOT } from '../support/bundle-checkout.js';

const require = createRequire(import.meta.url);

describe('the CLI bundle (scripts/bundle.mjs, bin/router.cjs)', () => {
  let t: TestEnv;
  let dir: string;
  envAndFolderForAll((env, folder) => {
    t = env;
    dir = folder;
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
});
