import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.js';

// undici in the CLI bundle (scripts/bundle-plugins.mjs: leanUndici, ownChunk): the pack holds only
// what a one-shot chat runs; what a run needs in a case router rarely meets is a chunk of its own.
const ROOT = resolve(BIN, '..', '..');
const chunks = join(ROOT, 'dist', 'cli.chunks');
/** esbuild's name of a CommonJS module it bundled: `"node_modules/undici/lib/<path>"(`. */
const undiciModule = (path: string) => `"node_modules/undici/lib/${path}"(`;
const pack = () => readFileSync(join(ROOT, 'dist', 'cli.bundle.cjs'), 'latin1');
const chunkTexts = () => readdirSync(chunks).filter((name) => name.endsWith('.cjs')).map((name) => readFileSync(join(chunks, name), 'latin1'));

let t: TestEnv;
let proxy: ConnectProxy;
let proxyUrl: string;
const tunnels: string[] = [];
beforeAll(async () => {
  t = await startTestEnv();
  const emulatorPort = Number(new URL(t.env.ROUTER_API_ROOT!).port);
  proxy = await startConnectProxy(emulatorPort, (req) => void tunnels.push(req.url!));
  proxyUrl = proxy.url;
});
afterAll(async () => {
  await proxy.close();
  await t.close();
});

describe('undici in the CLI bundle', () => {
  it('packs only the dispatchers a one-shot chat runs, of the parser\'s constants only the tables it reads, no header-name tree: none of fetch, WebSocket, caches, mocks, interceptors; HTTP/2, proxies, the parser without SIMD and fetch bodies in chunks', () => {
    const packed = pack();
    for (const used of ['dispatcher/agent.js', 'dispatcher/pool.js', 'dispatcher/client-h1.js', 'core/errors.js']) expect(packed).toContain(undiciModule(used));
    // Of llhttp's constants, the tables the HTTP/1 client reads (leanParserConstants), not the module.
    expect(packed).not.toContain(undiciModule('llhttp/constants.js'));
    expect(packed).toMatch(/exports\.ERROR=\{OK:0,/);
    // undici's tree of well-known header names is not built: it lowercases names itself (noHeaderTree).
    expect(packed).not.toContain(undiciModule('core/tree.js'));
    for (const unused of ['dispatcher/client-h2.js', 'dispatcher/env-http-proxy-agent.js', 'dispatcher/proxy-agent.js', 'core/socks5-client.js', 'llhttp/llhttp-wasm.js', 'llhttp/llhttp_simd-wasm.js', 'web/fetch/body.js', 'web/fetch/index.js'])
      expect(packed).not.toContain(undiciModule(unused));
    const chunked = chunkTexts().join('\n');
    for (const own of ['dispatcher/client-h2.js', 'dispatcher/env-http-proxy-agent.js', 'llhttp/llhttp-wasm.js', 'web/fetch/body.js']) expect(chunked).toContain(undiciModule(own));
    // What undici's entry point loads and no part of router uses: in neither.
    for (const never of ['web/fetch/index.js', 'web/websocket/', 'web/cache/', 'web/cookies/', 'web/eventsource/', 'mock/', 'interceptor/', 'cache/sqlite-cache-store.js', 'api/api-request.js']) {
      expect(packed).not.toContain(`"node_modules/undici/lib/${never}`);
      expect(chunked).not.toContain(`"node_modules/undici/lib/${never}`);
    }
  });

  it('reads the parser with SIMD from the file beside the bundle, the bytes undici keeps as base64 (parserFile)', () => {
    expect(pack()).toContain('"llhttp-simd.wasm"');
    const undiciParser = createRequire(join(ROOT, 'package.json'))('undici/lib/llhttp/llhttp_simd-wasm.js') as Buffer;
    // The same bytes: V8 keeps one module per bytes, so the one bin/router.cjs compiles is undici's.
    expect(readFileSync(join(ROOT, 'dist', 'llhttp-simd.wasm')).equals(undiciParser)).toBe(true);
  });

  it('answers from a package without that file: undici takes its parser without SIMD, from its chunk', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'router-parser-'));
    try {
      cpSync(join(ROOT, 'bin'), join(copy, 'bin'), { recursive: true });
      cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
      cpSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
      symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
      rmSync(join(copy, 'dist', 'llhttp-simd.wasm'));
      const run = promisify(execFile)(process.execPath, [join(copy, 'bin', 'router.cjs'), 'chat', '--model', 'local/echo', 'no parser file'], { encoding: 'utf8', env: { ...process.env, ...t.env, ROUTER_TRACE_START: '1', ROUTER_NO_LOG: '1' } });
      run.child.stdin!.end(); // no prompt on stdin
      const r = await run;
      expect(r.stdout).toBe('no parser file\n');
      expect(r.stderr).toMatch(/^router: started from the bundle and its code cache\nrouter: loaded llhttp-wasm-\w+\.js$/m);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('carries a chat through a proxy from the environment, its modules read from their chunk only then', async () => {
    const r = await t.run(['chat', '--model', 'local/echo', 'through the proxy'], {
      env: { ROUTER_TRACE_START: '1', ROUTER_NO_LOG: '1', ROUTER_API_ROOT: t.env.ROUTER_API_ROOT!.replace('127.0.0.1', 'router.invalid'), HTTP_PROXY: proxyUrl, http_proxy: '', NO_PROXY: '', no_proxy: '' },
    });
    expect(r).toMatchObject({ code: 0, stdout: 'through the proxy\n' });
    expect(tunnels).toEqual([`router.invalid:${new URL(t.env.ROUTER_API_ROOT!).port}`]);
    expect(r.stderr).toMatch(/^router: loaded env-http-proxy-agent-\w+\.js$/m);
  });

  it('reads a header whatever the case of its name (undici lowercases names without its tree)', async () => {
    const page = createServer((_, res) => res.writeHead(200, { 'CONTENT-TYPE': 'text/html; charset=utf-8', 'X-Custom-Thing': 'x' }).end('<html></html>'));
    await new Promise<void>((done) => page.listen(0, '127.0.0.1', done));
    try {
      const root = `http://127.0.0.1:${(page.address() as AddressInfo).port}/api`;
      const r = await t.run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_NO_LOG: '1', ROUTER_API_ROOT: root } });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('answered with a web page, not the API');
    } finally {
      await new Promise((done) => page.close(done));
    }
  });

  it('parses answers with the parser without SIMD where undici takes it (UNDICI_NO_WASM_SIMD=1), read from its chunk', async () => {
    const r = await t.run(['chat', '--model', 'local/echo', 'no simd'], { env: { ROUTER_TRACE_START: '1', ROUTER_NO_LOG: '1', UNDICI_NO_WASM_SIMD: '1' } });
    expect(r).toMatchObject({ code: 0, stdout: 'no simd\n' });
    expect(r.stderr).toMatch(/^router: loaded llhttp-wasm-\w+\.js$/m);
    const plain = await t.run(['chat', '--model', 'local/echo', 'simd'], { env: { ROUTER_TRACE_START: '1', ROUTER_NO_LOG: '1' } });
    expect(plain).toMatchObject({ code: 0, stdout: 'simd\n', stderr: 'router: started from the bundle and its code cache\n' });
  });
});
