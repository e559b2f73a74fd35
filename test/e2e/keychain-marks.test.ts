import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';

// A key kept only in the keychain is hidden by its mark (docs/keys.md): gnome-keyring's Secret Service on a D-Bus
// session of its own, as keychain.test.ts runs it; skipped, saying why, where it is not installed (failed in CI).
const have = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
const ready = process.platform === 'linux' && have('dbus-run-session') && have('gnome-keyring-daemon');
const missing = 'dbus-run-session or gnome-keyring-daemon is not installed (bash scripts/test-tools.sh installs them)';
const inCi = !!process.env.CI;

const SESSION = fileURLToPath(new URL('../support/keychain-marks-session.mjs', import.meta.url));
const KEY = `sk-or-v1-${'5e1f'.repeat(16)}`;

let t: TestEnv;
let home: string;
let echo: Server;
let echoRoot: string;
beforeAll(async () => {
  t = await startTestEnv();
  home = mkdtempSync(join(tmpdir(), 'router-marks-'));
  // A service that says the key back: in a refusal's message, and in a 2xx body `router api` prints as it came.
  echo = createServer((req, res) => {
    req.resume();
    const refusal = req.url!.includes('/chat/completions');
    res.writeHead(refusal ? 400 : 200, { 'content-type': 'application/json' });
    res.end(refusal ? JSON.stringify({ error: { message: `this key is not allowed here: ${KEY}` } }) : JSON.stringify({ data: { label: KEY, note: `"${KEY}"` } }));
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  echoRoot = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/api`;
});
afterAll(async () => {
  await t.close();
  await new Promise((r) => echo.close(r));
  rmSync(home, { recursive: true, force: true });
});

describe.skipIf(!ready && !inCi)(`a key kept only in gnome-keyring's Secret Service${ready ? '' : ` (${missing})`}`, () => {
  it('is hidden by its mark in what a model, a tool and a server say, by runs that read no keychain', async () => {
    if (!ready) throw new Error(`CI is set but ${missing}`);
    const dir = join(home, 'session');
    mkdirSync(join(dir, 'run'), { recursive: true, mode: 0o700 });
    const keyFile = join(home, 'key');
    writeFileSync(keyFile, KEY, { mode: 0o600 });
    const tools = join(home, 'tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } }, command: `cat '${keyFile}'` }]));
    const env = { ...process.env, ...t.env, HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'xdg'), XDG_RUNTIME_DIR: join(dir, 'run'), ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_KEYCHAIN: '', ROUTER_NO_LOG: '1', DISPLAY: undefined, DBUS_SESSION_BUS_ADDRESS: undefined };
    const child = spawn('dbus-run-session', ['--', 'sh', '-c', 'printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$0" "$@"', process.execPath, SESSION, BIN, keyFile, tools, echoRoot, t.apiKey], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (err += c));
    expect(await new Promise((r) => child.on('close', r)), err).toBe(0);
    const r = JSON.parse(out);

    expect(r.store.code, r.store.stderr).toBe(0);
    for (const step of ['echo', 'echoJson', 'tool', 'serverError', 'apiBody', 'usageError']) {
      expect(r[step].printedStart, `${step}: ${r[step].stdout}${r[step].stderr}`).toBe(false);
      // No run read the keychain (none could: their D-Bus address leads nowhere), nor said it could not.
      expect(r[step].stderr, step).not.toMatch(/keychain|keyring|D-Bus/);
    }
    expect(r.echo).toMatchObject({ code: 0, stdout: 'the work key is ****, said twice: "****"\n' });
    expect(r.echoJson.code).toBe(0);
    expect(JSON.parse(r.echoJson.stdout).choices[0].message.content).toBe('key=****');
    expect(r.tool.code, r.tool.stderr).toBe(0);
    expect(r.tool.stdout).toBe('From the tool results: get_weather answered: ****\n');
    expect(r.tool.stderr).toContain('****');
    expect(r.serverError.code).not.toBe(0);
    expect(r.serverError.stderr).toContain('this key is not allowed here: ****');
    expect(r.apiBody).toMatchObject({ code: 0 });
    expect(JSON.parse(r.apiBody.stdout)).toEqual({ data: { label: '****', note: '"****"' } });
    expect(r.usageError.stderr).toContain("unknown option '--****'");
    // The file keeps where the key is and its mark: its length, its kind, a salt and a hash; not the key.
    expect(r.file.holdsKey).toBe(false);
    expect(r.file.mark).toMatch(new RegExp(`^sha256:${KEY.length}:sk-or-v1-:[0-9a-f]{32}:[0-9a-f]{64}$`));
    // A key kept before marks were: the run that read it from the keychain to send it kept its mark.
    expect(r.oldRun).toMatchObject({ code: 0, stdout: 'hi\n' });
    expect(r.oldMark).toMatch(new RegExp(`^sha256:${t.apiKey.length}:[a-z0-9_-]*:[0-9a-f]{32}:[0-9a-f]{64}$`));
  });
});
