import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// The CLI's small edges closing note 12 left (task c5): each said in one line, with the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('-cq: short flags run together work wherever each is valid, the program\'s (-q) or the command\'s (-c, -m)', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'clusters') };
  expect((await run(['chat', '-m', 'local/echo', '--conversation', 'clus', 'hi'], env)).code).toBe(0);
  // Was: "error: unknown option '-q'; see "router chat --help"" (commander reads a cluster only as far as the command knows).
  expect(await run(['chat', '-cq', '-m', 'local/echo', 'one'], env)).toMatchObject({ code: 0, stdout: 'one\n', stderr: '' });
  expect(await run(['chat', '-cqm', 'local/echo', 'two'], env)).toMatchObject({ code: 0, stdout: 'two\n', stderr: '' });
  expect(await run(['chat', '-cqmlocal/echo', 'three'], env)).toMatchObject({ code: 0, stdout: 'three\n', stderr: '' });
  expect(await run(['chat', '-m', 'local/echo', '-qc', 'four'], env)).toMatchObject({ code: 0, stdout: 'four\n', stderr: '' });
  expect((await run(['conversations', 'show', 'clus'], env)).stdout.match(/^user: /gm)?.length).toBe(5);
  // The value of a flag is never split: -s -cq is a system message "-cq".
  const sys = await run(['chat', '-m', 'local/echo', '--json', '-s', '-cq', 'five'], env);
  expect(sys.code, sys.stderr).toBe(0);
  // A letter no command on the way knows is still refused, by the word as given.
  expect(await run(['chat', '-cz', 'six'], env)).toMatchObject({ code: 2, stderr: "error: unknown option '-z'; see \"router chat --help\"\n" });
});

/** `router ARGS` with stdout and stderr on one terminal-like sink: what each wrote, in the order written. */
async function interleaved(args: string[]): Promise<{ code: number; writes: string[] }> {
  const writes: string[] = [];
  const sink = (name: string) => Object.assign(new Writable({ write: (c: Buffer, _e, done) => (writes.push(`${name}: ${c.toString().trim()}`), done()) }), { columns: 80 });
  const env: NodeJS.ProcessEnv = { ...process.env, ...t.env, FORCE_COLOR: undefined };
  const code = await main(['node', 'router', ...args], { stdin: Readable.from([Buffer.alloc(0)]), stdout: sink('out'), stderr: sink('err'), env, tty: { stdin: false, stdout: false, stderr: false } });
  return { code, writes: writes.filter((w) => !/: $/.test(w)) };
}

it('--usage is said after the answer it counts, --jq and --json alike (was: before it, on a shared terminal)', async () => {
  const usage = /^err: usage: /;
  for (const args of [
    ['chat', '--model', 'local/echo', '--json', '--jq', '.choices[0].message.content', '--usage', 'hi'],
    ['chat', '--model', 'local/echo', '--stream', '--json', '--jq', '.object', '--usage', 'hi'],
    ['responses', '--model', 'local/echo', '--jq', '.output_text // .status', '--usage', 'hi'],
    ['embed', '--model', 'local/embed', '--json', '--usage', 'hi'],
    ['embed', '--model', 'local/embed', '--jq', '.model', '--usage', 'hi'],
  ]) {
    const { code, writes } = await interleaved(args);
    expect(code, writes.join('\n')).toBe(0);
    expect(writes.filter((w) => usage.test(w)).length, args.join(' ')).toBe(1);
    expect(writes.at(-1), args.join(' ')).toMatch(usage);
    expect(writes.some((w) => w.startsWith('out: ')), args.join(' ')).toBe(true);
  }
});

it('config list and get hide the password of a URL anywhere in a value, as roles show does (one function)', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'config-mcp-urls') };
  const mcp = 'http://me:s3cret@127.0.0.1:9/mcp\nnpx srv --url=https://u:p%40ss@h.example/x';
  expect((await run(['config', 'set', 'mcp', mcp], env)).code).toBe(0);
  const shown = 'http://***@127.0.0.1:9/mcp\nnpx srv --url=https://***@h.example/x';
  // Was: the second line as written, its password and all (hidden only where a line starts with a URL).
  expect(await run(['config', 'get', 'mcp'], env)).toMatchObject({ code: 0, stdout: `${shown}\n` });
  const list = await run(['config', 'list', '--json'], env);
  expect(list.code, list.stderr).toBe(0);
  expect(list.stdout).not.toMatch(/s3cret|p%40ss/);
  expect(JSON.stringify(JSON.parse(list.stdout))).toContain(JSON.stringify(shown).slice(1, -1));
  const text = await run(['config', 'list'], env);
  expect(text.stdout).not.toMatch(/s3cret|p%40ss/);
  const role = await run(['roles', 'save', 'remote', '--system', 'terse', '--mcp', 'http://me:s3cret@127.0.0.1:9/mcp', '--mcp', 'npx srv --url=https://u:p%40ss@h.example/x'], env);
  expect(role.code, role.stderr).toBe(0);
  expect((await run(['roles', 'show', 'remote'], env)).stdout).toContain('  - npx srv --url=https://***@h.example/x\n');
});
