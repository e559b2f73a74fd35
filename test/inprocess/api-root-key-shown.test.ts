import { expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { sharedCliEnv, type CliEnv } from '../support/cli-env.js';

// A key pasted where a URL goes (--api-root "$ROUTER_API_KEY", a root with ?key=…, a proxy with a path) is refused
// in one line, exit 2, nothing sent: the line says where it came from and never shows the key.
let t: CliEnv;
sharedCliEnv((e) => (t = e));

it('the refusals of an API root or proxy that hold a key name the setting and hide the key', async () => {
  const key = t.apiKey;
  for (const [args, env, said] of [
    [['--api-root', key], {}, '--api-root must be an http(s) URL such as http://127.0.0.1:8080/api, got "***"'],
    [['--api-root', `ftp://127.0.0.1/${key}`], {}, '--api-root must be an http(s) URL such as http://127.0.0.1:8080/api, got "ftp://127.0.0.1/***"'],
    [['--api-root', `http://127.0.0.1:1/api?key=${key}`], {}, '--api-root must not hold a query or a fragment ("http://127.0.0.1:1/api?…")'],
    [['--api-root', `http://127.0.0.1:1/api#${key}`], {}, '--api-root must not hold a query or a fragment ("http://127.0.0.1:1/api#…")'],
    [[], { ROUTER_API_ROOT: key }, 'ROUTER_API_ROOT must be an http(s) URL such as http://127.0.0.1:8080/api, got "***"'],
    [['--api-root', 'http://api.example.invalid/api'], { HTTP_PROXY: `http://proxy.example:3128/${key}` }, 'HTTP_PROXY must be a proxy\'s address alone'],
  ] as const) {
    const r = await t.run([...args, 'chat', '--model', 'local/echo', 'hi'], { env });
    // Old code: the key in full on stderr, in each of these but the proxy's (whose path was shown too).
    expect(r.stderr).not.toContain(key.slice(12));
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain(said);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  }
  expect(t.requests()).toHaveLength(0);
  const stored = await t.run(['config', 'set', 'api_root', key]);
  expect(stored).toMatchObject({ code: 2, stderr: 'error: api_root must be an http(s) URL such as http://127.0.0.1:8080/api, got "***"\n' });
});

it('the library says the same of an apiRoot holding a key', () => {
  const key = t.apiKey;
  for (const apiRoot of [key, `http://127.0.0.1:1/api?key=${key}`]) {
    let said = '';
    try {
      new RouterClient({ apiKey: 'x', apiRoot });
    } catch (err) {
      said = (err as Error).message;
    }
    expect(said).toMatch(/apiRoot|API root/);
    expect(said).not.toContain(key.slice(12));
  }
});
