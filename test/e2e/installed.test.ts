import { execFile, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers.js';
import { installedPackage } from '../support/installed-package.js';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

/** A cache folder with nothing in it: what the trace says is the build's caches' doing, whatever this machine kept (bin/router.cjs reads its own first). */
const NO_OWN_CACHE = join(tmpdir(), `router-no-own-cache-${process.pid}`);

// Issue 46: the package users install starts as the checkout does, from the bundle and its code cache.
// installedPackage(): `npm pack` as it runs in the checkout, `npm install` of the tarball; made once a build.
const ROOT = resolve(BIN, '..', '..');
const run = promisify(execFile);

describe('the installed package (npm pack, npm install of the tarball)', () => {
  let dir: string;
  let prefix: string;
  let installed: string;
  let installLog: string;
  let t: CliEnv;
  beforeAll(async () => {
    t = await startCliEnv();
    dir = mkdtempSync(join(tmpdir(), 'router-installed-'));
    ({ prefix, installLog } = await installedPackage(ROOT));
    installed = join(prefix, 'node_modules', 'router-cli', 'bin', 'router.cjs');
    // A pack and an install the first time for a build: minutes on a loaded machine.
  }, 240_000);
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const router = (args: string[]) => {
    const call = run(process.execPath, [installed, ...args], { encoding: 'utf8', env: { ...process.env, ...t.env, ROUTER_NO_LOG: '1', ROUTER_TRACE_START: '1', XDG_CACHE_HOME: NO_OWN_CACHE } });
    call.child.stdin?.end();
    return call;
  };

  it('installs without an install-script warning', () => {
    expect(installLog).not.toMatch(/install-scripts|prepare/);
  });

  it('runs a one-shot chat from the bundle and its code cache, though unpacking gave the files new times', async () => {
    const r = await router(['chat', '--model', 'local/echo', 'from the package']);
    expect(r.stdout).toBe('from the package\n');
    expect(r.stderr).toBe('router: started from the bundle and its code cache\n');
  });

  it('runs a command that lives in a chunk of its own from the bundle, its chunks with their code caches', async () => {
    const r = await router(['models']);
    expect(r.stdout).toMatch(/^local\/echo\t/m);
    const [first, ...loaded] = r.stderr.trim().split('\n');
    expect(first).toBe('router: started from the bundle and its code cache');
    expect(loaded.some((line) => /^router: loaded models-\w+\.js and its code cache$/.test(line))).toBe(true);
    for (const line of loaded) expect(line).toMatch(/^router: loaded [\w-]+\.js and its code cache$/);
  });

  it('runs a rarely used command from the bundle though no training call made its chunk a code cache', async () => {
    const r = await router(['embed', '--help']);
    expect(r.stdout).toMatch(/^Usage: router embed/);
    const [first, ...loaded] = r.stderr.trim().split('\n');
    expect(first).toBe('router: started from the bundle and its code cache');
    expect(loaded).toContainEqual(expect.stringMatching(/^router: loaded embed-\w+\.js$/));
  });

  it('answers --version from quick.cjs', async () => {
    const r = await router(['--version']);
    expect(r.stdout).toBe(`${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}\n`);
    expect(r.stderr).toBe('router: started from quick.cjs\n');
  });

  it('answers the root help off a terminal as rendered at build, without starting node\'s ES module loader', async () => {
    const list = join(dir, 'modules.json');
    const preload = join(dir, 'modules.cjs');
    writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(process.moduleLoadList)));`);
    const call = run(process.execPath, [installed, '--help'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: `--require ${preload}` } });
    call.child.stdin?.end();
    const r = await call;
    expect(r.stdout).toMatch(/^Usage: router \[options\] \[command\]\n/);
    expect(JSON.parse(readFileSync(list, 'utf8'))).not.toContain('NativeModule internal/modules/esm/module_job');
  });

  // Issue 44's "done means": a program of the installed package holds a conversation with an attachment,
  // a schema, a local tool and an MCP tool under a cost cap (docs/library.md's program, as written there).
  it('runs docs/library.md\'s conversation with an attachment, a schema, a local and an MCP tool under a cap', async () => {
    const page = readFileSync(join(ROOT, 'docs', 'library.md'), 'utf8');
    const program = /## All of it in one conversation[\s\S]*?```js\n([\s\S]*?)```/.exec(page)![1]!;
    const work = join(dir, 'program');
    mkdirSync(work);
    writeFileSync(join(work, 'photo.png'), Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'));
    // Beside the installed node_modules (linked: the installed prefix is kept for other runs, never written): `router-cli`
    // is the tarball's; server-everything from this checkout's PATH.
    mkdirSync(join(dir, 'beside'));
    symlinkSync(join(prefix, 'node_modules'), join(dir, 'beside', 'node_modules'));
    const file = join(dir, 'beside', 'conversation.mjs');
    writeFileSync(file, program);
    const env = { ...process.env, ...t.env, PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}` };
    const r = await run(process.execPath, [file], { cwd: work, encoding: 'utf8', env, timeout: 60_000 });
    expect(r.stdout).toBe('echo,today string true\n');
  });

  it('is a good citizen in a program: no output, no process state changed, no key reaching a server or a log, exits', async () => {
    mkdirSync(join(dir, 'citizen'), { recursive: true });
    symlinkSync(join(prefix, 'node_modules'), join(dir, 'citizen', 'node_modules'));
    const file = join(dir, 'citizen', 'citizen.mjs');
    writeFileSync(file, `
const said = [];
for (const s of [process.stdout, process.stderr]) s.write = (c) => (said.push(String(c)), true);
const state = () => JSON.stringify([process.eventNames().map((e) => [String(e), process.listenerCount(e)]), Error.stackTraceLimit, process.cwd(), process.env, process.exitCode, globalThis[Symbol.for('undici.globalDispatcher.1')] === undefined]);
const before = state();
const { RouterClient } = await import('router-cli');
const { chatModel, functionTool, serviceListPrices, SpendGuard, ToolSet } = await import('router-cli/kit');
await import('router-cli/batch');
const apiKey = process.env.ROUTER_API_KEY;
const client = new RouterClient({ apiKey, apiRoot: process.env.ROUTER_API_ROOT });
const model = chatModel(client, 'local/tools');
const guard = new SpendGuard({ prices: serviceListPrices(client), maxCost: 0.05 });
const add = functionTool('add', { type: 'object', properties: { a: { type: 'number' } } }, ({ a }) => a);
const tools = await ToolSet.open({ tools: [add], mcp: [process.argv[2] + ' env'], env: process.env });
const r = await model.prompt('please add, and env', { tools, guard });
await tools.close();
await client.close();
const served = r.toolCalls.find((c) => c.call.name === 'env').outcome.text;
const logged = JSON.stringify([model, guard, tools]);
process.stdout.write = (c) => process.stdout.constructor.prototype.write.call(process.stdout, c);
console.log(JSON.stringify({ said, same: state() === before, served: served.includes(apiKey), logged: logged.includes(apiKey) }));
`);
    const fixture = join(ROOT, 'test', 'support', 'mcp-fixture-server.mjs');
    const r = await run(process.execPath, [file, `'${process.execPath}' '${fixture}'`], { cwd: join(dir, 'citizen'), encoding: 'utf8', env: { ...process.env, ...t.env }, timeout: 60_000 });
    // Exited by itself (no handle left open), and said nothing of its own.
    expect(JSON.parse(r.stdout)).toEqual({ said: [], same: true, served: false, logged: false });
    expect(r.stderr).toBe('');
  });

  // `router serve`, and any call with a "serve" among its words, starts from the modules, whose --jq
  // worker loaded node_modules/jq-wasm: as npm unpacked it, without the run() the build adds in a
  // checkout ("--jq: jq.run is not a function", exit 1).
  it('runs --jq from the modules too, though the installed jq-wasm is not rewritten', async () => {
    const r = await router(['chat', '--model', 'local/echo', '--json', '--jq', '.choices[0].message.content', 'serve']);
    expect(r.stdout).toBe('serve\n');
    expect(r.stderr).toBe('');
    expect(readFileSync(join(prefix, 'node_modules', 'jq-wasm', 'dist', 'build', 'jq.js'), 'utf8')).not.toMatch(/^\/\* router: linear jq IO/);
  });

  it('names the docs pages its help points to by their paths in the installed package', async () => {
    const pkg = join(prefix, 'node_modules', 'router-cli');
    // Each a command whose help names a page (docs/keys.md, docs/tools.md, docs/gateway.md): a bundle chunk of its own.
    for (const args of [['config', '--help'], ['login', '--help'], ['auth', 'migrate', '--help'], ['serve', '--help']]) {
      const { stdout } = await router(args);
      // Was "See docs/keys.md": a path that is nowhere for a user of the installed package.
      expect(stdout, args.join(' ')).not.toMatch(/(?<![\w./-])docs\//);
      const named = stdout.match(/\S+\/docs\/[\w-]+\.md/g) ?? [];
      expect(named.length, args.join(' ')).toBeGreaterThan(0);
      for (const page of named.map((p) => p.replace(/^\(/, ''))) {
        expect(page.startsWith(join(pkg, 'docs') + '/'), page).toBe(true);
        expect(readFileSync(page, 'utf8')).toMatch(/^# /m);
      }
    }
  });

  it('keeps a page\'s path whole on one line of help when the package\'s folder has a space (a home under "John Smith")', async () => {
    const spaced = join(dir, 'John Smith', 'prefix');
    cpSync(prefix, spaced, { recursive: true });
    const pkg = join(spaced, 'node_modules', 'router-cli');
    for (const args of [['config', '--help'], ['login', '--help'], ['serve', '--help']]) {
      const { stdout } = await run(process.execPath, [join(pkg, 'bin', 'router.cjs'), ...args], { encoding: 'utf8', env: { ...process.env, ...t.env, COLUMNS: '80' } });
      // Was "See /tmp/…/John" at the end of a line and "Smith/prefix/…/docs/keys.md" on the next: wrapped at the space.
      const named = stdout.match(/\/[^\n]*?\/docs\/[\w-]+\.md/g)?.map((p) => p.slice(p.lastIndexOf(' /') + 1)) ?? [];
      expect(named.length, args.join(' ')).toBeGreaterThan(0);
      for (const page of named) expect(page.startsWith(join(pkg, 'docs') + '/'), `${args.join(' ')}: ${page}`).toBe(true);
      expect(stdout, args.join(' ')).not.toMatch(/\ue000/);
    }
  });

  it('says when it starts from the modules: the checkout with a bundle of another build', () => {
    const copy = join(dir, 'checkout');
    cpSync(join(ROOT, 'bin'), join(copy, 'bin'), { recursive: true });
    cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    const main = join(copy, 'dist', 'cli', 'main.js');
    writeFileSync(main, readFileSync(main, 'utf8').replace(/^\/\* router build \w+ \*\/\n/, ''));
    const r = spawnSync(process.execPath, [join(copy, 'bin', 'router.cjs'), 'chat', '--help'], { encoding: 'utf8', env: { ...process.env, ROUTER_TRACE_START: '1'} });
    expect(r.stderr).toBe('router: started from the modules (the bundle is of another build)\n');
    expect(r.stdout).toMatch(/^Usage: router chat/);
  });
});
