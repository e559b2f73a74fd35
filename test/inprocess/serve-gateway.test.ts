import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
beforeAll(async () => {
  t = await startCliEnv();
});
afterAll(() => t.close());

const serve = (...args: string[]) => t.run(['serve', '--port', '0', '--state', join(t.dir, 'gw-state'), ...args]);
const file = (name: string, text: string) => {
  writeFileSync(join(t.dir, name), text);
  return join(t.dir, name);
};
const GOOD = 'providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { test/chat: x } }\n';

describe('serve --providers, --record, --replay: refused in words before anything starts', () => {
  it.each([
    [['--record', 'c'], 'error: --record needs --providers FILE: cassettes hold upstream exchanges\n'],
    [['--record-missing'], 'error: --record-missing goes with --replay DIR\n'],
    [['--providers', 'none.yaml'], 'error: --providers none.yaml: no such file\n'],
  ])('%j', async (args, said) => {
    expect(await serve(...args)).toMatchObject({ code: 2, stdout: '', stderr: said });
  });

  it('a key in the file, a bad base_url, a price for no model, both --record and --replay, a missing replay folder', async () => {
    const key = file('key.yaml', 'providers:\n  - { name: up, base_url: "http://x/v1", api_key: sk-1, models: { a/b: c } }\n');
    expect((await serve('--providers', key)).stderr).toBe(`error: --providers ${key}: providers[0].api_key: keys never go in the file; name an environment variable with api_key_env\n`);
    const url = file('url.yaml', 'providers:\n  - { name: up, base_url: "ftp://x", models: { a/b: c } }\n');
    expect((await serve('--providers', url)).stderr).toBe(`error: --providers ${url}: provider up: base_url must be an http(s) URL\n`);
    const price = file('price.yaml', 'providers:\n  - { name: up, base_url: "http://x/v1", models: { a/b: c }, prices: { a/c: { prompt: 1 } } }\n');
    expect((await serve('--providers', price)).stderr).toBe(`error: --providers ${price}: provider up: prices.a/c names a model that is not in its models\n`);
    const good = file('good.yaml', GOOD);
    mkdirSync(join(t.dir, 'cas'), { recursive: true });
    expect(await serve('--providers', good, '--record', 'cas', '--replay', 'cas')).toMatchObject({ code: 2, stderr: 'error: --record and --replay go one at a time (--replay DIR --record-missing records what is missing)\n' });
    expect(await serve('--providers', good, '--replay', join(t.dir, 'nowhere'))).toMatchObject({ code: 2, stderr: `error: --replay ${join(t.dir, 'nowhere')}: no such folder\n` });
  });
});
