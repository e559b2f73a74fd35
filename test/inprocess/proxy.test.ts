import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.js';

// Behind a proxy, as curl and gh are: HTTP_PROXY / HTTPS_PROXY / NO_PROXY. The proxy here is a real
// CONNECT proxy on 127.0.0.1 that sends every tunnel to the emulator, whatever host it is asked
// for: the API root names a host no resolver knows, so only the proxy can reach it.
let t: CliEnv;
let emulatorPort: number;
let proxy: ConnectProxy;
let proxyUrl: string;
let answer: string | undefined;
const asked: { target: string; auth: string | undefined }[] = [];

beforeAll(async () => {
  t = await startCliEnv();
  emulatorPort = Number(new URL(t.apiRoot).port);
  proxy = await startConnectProxy(emulatorPort, (req) => {
    asked.push({ target: req.url!, auth: req.headers['proxy-authorization'] });
    return answer;
  });
  proxyUrl = proxy.url;
});
afterAll(async () => {
  await proxy.close();
  await t.close();
});
beforeEach(() => {
  asked.length = 0;
  answer = undefined;
});

const farRoot = () => `http://router.invalid:${emulatorPort}/api`;
/** Only the proxy settings a test gives (blank is unset), whatever this machine's environment holds. */
const only = (env: Record<string, string>) => ({ http_proxy: '', HTTP_PROXY: '', https_proxy: '', HTTPS_PROXY: '', no_proxy: '', NO_PROXY: '', ...env });
/** The warning of a key sent over plain http:// to a host not this machine (farRoot's), said once a run. */
const inTheClear = () => `warning: the API key goes to router.invalid:${emulatorPort} over plain http://, unencrypted: anyone on the way can read it (use https://)\n`;
const chat = (env: Record<string, string>, text = 'through the proxy') => t.run(['chat', '--model', 'local/echo', text], { env: only({ ROUTER_API_ROOT: farRoot(), ...env }) });

describe('a proxy from the environment', () => {
  it('HTTP_PROXY carries a streamed chat and a batch listing; credentials in its URL go as Proxy-Authorization', async () => {
    expect(await chat({ HTTP_PROXY: proxyUrl })).toMatchObject({ code: 0, stdout: 'through the proxy\n' });
    expect(asked).toEqual([{ target: `router.invalid:${emulatorPort}`, auth: undefined }]);
    expect((await t.run(['batch', 'list', '--json'], { env: only({ ROUTER_API_ROOT: farRoot(), http_proxy: proxyUrl }) })).code).toBe(0);
    asked.length = 0;
    const withUser = proxyUrl.replace('http://', 'http://ada:s%3Acret@');
    expect(await chat({ HTTP_PROXY: withUser }, 'with a user')).toMatchObject({ code: 0, stdout: 'with a user\n' });
    expect(asked[0]!.auth).toBe(`Basic ${Buffer.from('ada:s:cret').toString('base64')}`);
  });

  it('router login checks the key through the proxy too', async () => {
    const env = only({ HTTP_PROXY: proxyUrl, ROUTER_CONFIG_DIR: join(t.dir, 'proxy-login'), ROUTER_API_KEY: '', ROUTER_API_ROOT: '' });
    const r = await t.run(['login', '--with-key', '--api-root', farRoot()], { env, input: t.apiKey });
    expect(r.code).toBe(0);
    expect(asked.map((a) => a.target)).toEqual([`router.invalid:${emulatorPort}`]);
  });

  it('this machine is reached directly; so are the hosts of NO_PROXY ("*": all); a blank proxy is none', async () => {
    const direct = await t.run(['chat', '--model', 'local/echo', 'loopback'], { env: only({ HTTP_PROXY: proxyUrl, NO_PROXY: 'example.com' }) });
    expect(direct).toMatchObject({ code: 0, stdout: 'loopback\n' });
    for (const env of [{ HTTP_PROXY: proxyUrl, NO_PROXY: 'router.invalid' }, { HTTP_PROXY: proxyUrl, no_proxy: '*' }, { HTTP_PROXY: ' ' }] as Record<string, string>[]) {
      const r = await chat(env);
      expect(r).toMatchObject({ code: 8, stderr: `${inTheClear()}error: host not reachable: router.invalid:${emulatorPort} (the API root from ROUTER_API_ROOT) (after 2 retries; --max-retries sets how many)\n` });
    }
    expect(asked).toEqual([]);
    // As curl: an https:// root goes only through HTTPS_PROXY, never the HTTP one.
    const https = await chat({ HTTP_PROXY: proxyUrl, ROUTER_API_ROOT: `https://router.invalid:${emulatorPort}/api` });
    expect(https).toMatchObject({ code: 8, stderr: `error: host not reachable: router.invalid:${emulatorPort} (the API root from ROUTER_API_ROOT) (after 2 retries; --max-retries sets how many)\n` });
    expect(asked).toEqual([]);
  });

  it('a proxy that is down, or that wants credentials, is named in one line (exit 8); a refusal is not retried', async () => {
    const down = await chat({ HTTP_PROXY: 'http://127.0.0.1:1' });
    expect(down).toMatchObject({ code: 8, stderr: `${inTheClear()}error: connection refused: the proxy 127.0.0.1:1, on the way to router.invalid:${emulatorPort} (the proxy from HTTP_PROXY) (after 2 retries; --max-retries sets how many)\n` });
    answer = '407 Proxy Authentication Required';
    const refused = await chat({ HTTP_PROXY: proxyUrl });
    expect(refused.code).toBe(8);
    expect(refused.stderr).toBe(
      `${inTheClear()}error: the proxy ${new URL(proxyUrl).host} refused the way to router.invalid:${emulatorPort} (HTTP 407): it asks for a user name and password (put them in the proxy URL: http://user:password@host:port) (the proxy from HTTP_PROXY)\n`,
    );
    expect(asked).toHaveLength(1);
  });

  it('a proxy without a scheme is http://, as for curl', async () => {
    expect(await chat({ http_proxy: new URL(proxyUrl).host }, 'no scheme')).toMatchObject({ code: 0, stdout: 'no scheme\n' });
    expect(asked).toHaveLength(1);
  });

  it('the proxy that applies, when it is not an http(s) URL, is a usage error before anything is sent, its password not shown', async () => {
    const socks = { HTTPS_PROXY: 'socks5://me:hunter2@10.0.0.1:1080' };
    const before = t.requests().length;
    const r = await chat({ ...socks, ROUTER_API_ROOT: `https://router.invalid:${emulatorPort}/api` });
    expect(r).toMatchObject({ code: 2, stderr: 'error: HTTPS_PROXY must be an http(s) URL such as http://proxy.example:3128, got "socks5://***@10.0.0.1:1080"\n' });
    expect(t.requests()).toHaveLength(before);
    // One that does not apply (an http:// root here, or this machine) is left alone.
    expect(await t.run(['chat', '--model', 'local/echo', 'emulator'], { env: only(socks) })).toMatchObject({ code: 0, stdout: 'emulator\n' });
    expect(asked).toEqual([]);
  });
});
