import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers.js';

// A D-Bus session whose socket accepts and never answers (a hung dbus-daemon). The keychain binding
// connects on the main thread: it held that thread for ever, and with it every signal (no timeout,
// no Ctrl-C). Spawned: the old code would hold this test's thread too.
let t: TestEnv;
let dir: string;
let bus: Server;
const held: Socket[] = [];
beforeAll(async () => {
  t = await startTestEnv();
  dir = mkdtempSync(join(tmpdir(), 'router-silent-bus-'));
  bus = createServer((s) => held.push(s));
  await new Promise<void>((r) => bus.listen(join(dir, 'bus'), r));
});
afterAll(async () => {
  for (const s of held) s.destroy();
  await new Promise((r) => bus.close(r));
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

function env(name: string): Record<string, string | undefined> {
  const home = join(dir, name);
  mkdirSync(home, { recursive: true });
  return { HOME: home, ROUTER_CONFIG_DIR: join(home, 'config'), ROUTER_KEYCHAIN: '', ROUTER_API_KEY: '', ROUTER_NO_LOG: '1', DISPLAY: undefined, DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'bus')}` };
}

describe.runIf(process.platform === 'linux')('a session bus that never answers', () => {
  it('config set api_key keeps the key in the file and says the bus did not answer', async () => {
    const e = env('set');
    const r = await t.run(['config', 'set', 'api_key'], { env: e, input: 'sk-rt-v1-notreal0000', timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^saved the api_key of profile "default" in .+config\.json \(a private 0600 file\): no keychain to keep it in \(the D-Bus session at DBUS_SESSION_BUS_ADDRESS did not answer within 3 s\)\n$/);
    expect(JSON.parse(readFileSync(join(e.ROUTER_CONFIG_DIR!, 'config.json'), 'utf8')).profiles.default.api_key).toBe('sk-rt-v1-notreal0000');
  });

  it('a key kept in the keychain cannot be read: one line, exit 3, nothing sent', async () => {
    const e = env('get');
    mkdirSync(e.ROUTER_CONFIG_DIR!, { recursive: true });
    const profile = { api_key_keychain: `default/api_key (${join(e.ROUTER_CONFIG_DIR!, 'config.json')})` };
    writeFileSync(join(e.ROUTER_CONFIG_DIR!, 'config.json'), JSON.stringify({ current: 'default', profiles: { default: profile } }), { mode: 0o600 });
    t.clearRequests();
    const r = await t.run(['chat', '--model', 'local/echo', 'hi'], { env: e, timeoutMs: 60_000 });
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toMatch(/^error: the api_key of profile "default" is kept in the Secret Service keyring, which cannot be read: the D-Bus session at DBUS_SESSION_BUS_ADDRESS did not answer within 3 s \(.+\)\n$/);
    expect(t.requests()).toHaveLength(0);
  });
});
