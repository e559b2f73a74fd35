import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { runInProcess, testStreams } from '../support/inprocess.js';
import { until } from '../support/until.js';

// A question whose input ends before its answer (a terminal closed, a typed-ahead feed run dry) is a one-line
// usage error naming the question: never a prompt left waiting on nothing, never "this is a bug".
const plain = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

describe('a prompt whose input ends', () => {
  it('config init: the question open when it ended is named, exit 2, no profile written', async () => {
    const env = { ROUTER_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'router-prompt-')), ROUTER_API_KEY: undefined, ROUTER_API_ROOT: undefined };
    const t = testStreams({ env, tty: { stdin: true, stderr: true } });
    const stdin = new PassThrough();
    const code = main(['node', 'router', 'config', 'init', '--profile', 'fresh'], { ...t.streams, stdin });
    expect(await until(() => plain(t.stderr()).includes('? API root'))).toBe(true);
    stdin.write('http://127.0.0.1:9/api\r');
    expect(await until(() => plain(t.stderr()).includes('? API key'))).toBe(true);
    stdin.end();
    expect(await code).toBe(2);
    expect(plain(t.stderr())).toMatch(/\nerror: input ended before an answer to "API key"\n/);
    const list = await runInProcess(['config', 'list', '--json'], { env });
    expect(JSON.parse(list.stdout).profiles).toEqual([]);
  });

  it('the same with nothing typed: the first question is named', async () => {
    const r = await runInProcess(['config', 'init'], { env: { ROUTER_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'router-prompt-')) }, input: '', tty: { stdin: true, stderr: true } });
    expect(r.code).toBe(2);
    expect(plain(r.stderr)).toMatch(/\nerror: input ended before an answer to "API root"\n/);
  });
});
