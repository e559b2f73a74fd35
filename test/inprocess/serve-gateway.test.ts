import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startEmulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream } from '../support/upstreams.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv());

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
    [['--replay-timing', '0'], 'error: --replay-timing goes with --replay DIR\n'],
    [['--providers', 'none.yaml'], 'error: --providers none.yaml: cannot read it (no such file or folder)\n'],
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
    // Before: "error: cannot use good.yaml: already exists" (--record), "no such folder" (--replay): neither named the flag or the file.
    expect(await serve('--providers', good, '--record', good)).toMatchObject({ code: 2, stdout: '', stderr: `error: --record ${good} is a file, not a folder\n` });
    expect(await serve('--providers', good, '--replay', good)).toMatchObject({ code: 2, stdout: '', stderr: `error: --replay ${good} is a file, not a folder\n` });
  });

  it('a misspelt setting names the one meant; a drift check of a folder with no cassette is no pass', async () => {
    // Before: "the file must hold `providers:`" for `provider:`, and exit 0, "0 recorded answers, the same shape".
    const top = file('top.yaml', GOOD.replace('providers:', 'provider:'));
    expect(await serve('--providers', top)).toMatchObject({ code: 2, stdout: '', stderr: `error: --providers ${top}: unknown setting "provider" (did you mean providers?)\n` });
    const inner = file('inner.yaml', GOOD.replace('models:', 'modles:'));
    expect(await serve('--providers', inner)).toMatchObject({ code: 2, stderr: `error: --providers ${inner}: providers[0]: unknown setting "modles" (did you mean models?)\n` });
    const odd = file('odd.yaml', `${GOOD}colour: blue\n`);
    expect((await serve('--providers', odd)).stderr).toBe(`error: --providers ${odd}: unknown setting "colour" (known: providers, local_models, batch_concurrency)\n`);
    const empty = join(t.dir, 'no-cassettes');
    mkdirSync(empty, { recursive: true });
    expect(await t.run(['serve', '--providers', file('good2.yaml', GOOD), '--check-drift', empty])).toMatchObject({ code: 2, stdout: '', stderr: `error: --check-drift ${empty}: no cassettes in it (router serve --record ${empty} writes them): nothing to check\n` });
  });
});

describe('providers files a user gets wrong: one line, exit 2, nothing started', () => {
  it('a key variable that is not set, one model id of two kinds, a folder, a model named twice', async () => {
    const unset = file('unset.yaml', 'providers:\n  - { name: openai, base_url: "http://127.0.0.1:9/v1", api_key_env: ROUTER_TEST_UNSET_KEY, models: { openai/gpt-4o-mini: gpt-4o-mini } }\n');
    const said = `error: --providers ${unset}: provider openai: api_key_env names ROUTER_TEST_UNSET_KEY, which is not set: export it (or drop api_key_env for a provider that takes no key)\n`;
    expect(await serve('--providers', unset)).toMatchObject({ code: 2, stdout: '', stderr: said });
    mkdirSync(join(t.dir, 'drift-none'), { recursive: true });
    expect(await t.run(['serve', '--providers', unset, '--check-drift', join(t.dir, 'drift-none')])).toMatchObject({ code: 2, stderr: said });
    // A replay asks no upstream: a CI run without the key replays all the same, and nothing goes without a key (unsaid).
    const warned: string[] = [];
    expect(parseProviders(readFileSync(unset, 'utf8'), {}, { warn: (l) => warned.push(l), keys: 'unused' }).providers[0]!.apiKey).toBeUndefined();
    expect(warned).toEqual([]);
    // --record-missing asks the upstream for what is missing: the key is needed, as for --record.
    mkdirSync(join(t.dir, 'replay-none'), { recursive: true });
    expect(await serve('--providers', unset, '--replay', join(t.dir, 'replay-none'), '--record-missing')).toMatchObject({ code: 2, stderr: said });
    const kinds = file('kinds.yaml', 'providers:\n  - { name: a, base_url: "http://127.0.0.1:9/v1", models: { t/m: x } }\n  - { name: b, base_url: "http://127.0.0.1:9/v1", embedding_models: { t/m: y } }\n');
    expect(await serve('--providers', kinds)).toMatchObject({ code: 2, stderr: `error: --providers ${kinds}: model t/m is listed for chat (provider a) and for embedding (provider b): one id, one kind of model\n` });
    expect(await serve('--providers', t.dir)).toMatchObject({ code: 2, stderr: `error: --providers ${t.dir}: is a folder: name a file in it\n` });
    const twice = file('twice.yaml', 'providers:\n  - name: a\n    base_url: "http://127.0.0.1:9/v1"\n    models: { t/m: x, t/m: y }\n');
    expect(await serve('--providers', twice)).toMatchObject({ code: 2, stderr: `error: --providers ${twice}: not YAML: Map keys must be unique at line 4, column 23\n` });
    const big = file('big.yaml', 'providers:\n  - { name: a, base_url: "http://127.0.0.1:9/v1", max_answer_mb: 0, models: { t/m: x } }\n');
    expect((await serve('--providers', big)).stderr).toBe(`error: --providers ${big}: provider a: max_answer_mb must be a number of MiB, more than 0 and at most 4096\n`);
  });

  it('a price that looks like one per million tokens is said at start (the file is USD per token)', () => {
    // Copied from a model list ($0.15 per million), it charged $0.15 a token without a word.
    const warned: string[] = [];
    const yaml = 'providers:\n  - { name: a, base_url: "http://127.0.0.1:9/v1", models: { t/m: x, t/n: y }, prices: { t/m: { prompt: 0.15, completion: 0.6 }, t/n: { prompt: 0.00000015, completion: 0.0006 } } }\n';
    const config = parseProviders(yaml, {}, { warn: (l) => warned.push(l) });
    expect(config.providers[0]!.models[0]!.prices).toEqual({ prompt: 0.15, completion: 0.6 });
    expect(warned).toEqual([
      'warning: provider a: prices.t/m.prompt is 0.15 USD per token, 150000 per million tokens: if 0.15 is per million, write 0.00000015',
      'warning: provider a: prices.t/m.completion is 0.6 USD per token, 600000 per million tokens: if 0.6 is per million, write 0.0000006',
    ]);
  });
});

describe('a providers file price that is no number: refused at start, naming the file, the provider and the member', () => {
  const yaml = (prompt: string) => `providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { t/m: x }, prices: { t/m: { prompt: ${prompt}, completion: 0.000002 } } }\n`;
  it.each([
    // Before: "" and null were priced at 0, "0.5" taken as 0.5, all in silence.
    ['""', 'is empty: must be a price per token (a number, 0 or more; leave the member out for a free side)'],
    ['null', 'is empty: must be a price per token (a number, 0 or more; leave the member out for a free side)'],
    ['"0.5"', 'is the string "0.5": write the number without quotes, 0.5'],
    ['-1', 'must be a price per token (a number, 0 or more), not -1'],
    ['.nan', 'must be a price per token (a number, 0 or more), not NaN'],
    ['free', 'must be a price per token (a number, 0 or more), not "free"'],
  ])('prompt: %s', async (prompt, said) => {
    const f = file('price-odd.yaml', yaml(prompt));
    expect(await serve('--providers', f)).toMatchObject({ code: 2, stdout: '', stderr: `error: --providers ${f}: provider up: prices.t/m.prompt ${said}\n` });
  });

  it('a side left out is free; both given are taken', () => {
    const only = parseProviders('providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { t/m: x }, prices: { t/m: { prompt: 0.000001 } } }\n', {});
    expect(only.providers[0]!.models[0]!.prices).toEqual({ prompt: 0.000001, completion: 0 });
  });
});

describe('serve --check-drift DIR', () => {
  it('says same for answers of the same shape, and drift (exit 1) with what changed', async () => {
    const yaml = (url: string) => `providers:\n  - { name: up, base_url: "${url}", api_key_env: ROUTER_API_KEY, models: { test/chat: local/echo } }\n`;
    const cassettes = join(t.dir, 'drift-cassettes');
    const config = parseProviders(yaml(`${t.apiRoot}/v1`), t.env);
    const gateway = await startEmulator({ stateDir: join(t.dir, 'drift-gw'), port: 0, gateway: { config, cassettes: { dir: cassettes, mode: 'record' } } });
    const key = gateway.store.firstKeys().apiKey;
    for (const stream of [false, true]) {
      const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/chat', stream, messages: [{ role: 'user', content: `drift ${stream}` }] }) });
      expect(res.status).toBe(200);
      await res.text();
    }
    await gateway.close();

    const same = await t.run(['serve', '--providers', file('drift-same.yaml', yaml(`${t.apiRoot}/v1`)), '--check-drift', cassettes]);
    expect(same.code).toBe(0);
    expect(same.stdout.split('\n').filter(Boolean).map((l) => l.split(' ')[0])).toEqual(['same', 'same']);

    const changed = await localUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }));
    });
    try {
      const drift = await t.run(['serve', '--providers', file('drift-changed.yaml', yaml(changed.baseUrl)), '--check-drift', cassettes]);
      expect(drift.code).toBe(1);
      expect(drift.stdout).toMatch(/^drift {2}up-local_echo-\w+\.json\n/);
      expect(drift.stdout).toContain('  - body.usage.cost: number\n');
      expect(drift.stdout).toContain('  - end: [DONE]\n');
      expect(drift.stderr).toBe('error: 2 of 2 recorded answers changed shape or could not be asked again\n');
    } finally {
      await changed.close();
    }
  });
});
