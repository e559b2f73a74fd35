import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// The CLI's small edges closing note 11 left ("CLI"): each said in one line, with the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('-qc -abc: -c among switches run together takes no id either; the refusal names --conversation -abc', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'cluster-id') };
  expect((await run(['chat', '-m', 'local/echo', '--conversation', '-abc', 'hi'], env)).code).toBe(0);
  const before = t.requests().length;
  // Was: -abc read as -a bc, "error: --attach: cannot read bc (no such file or folder)".
  expect(await run(['chat', '-m', 'local/echo', '-qc', '-abc', 'again'], env)).toMatchObject({ code: 2, stdout: '', stderr: 'error: -c (in -qc) continues the last conversation and takes no id: -abc reads as flags; to go on with conversation -abc, give --conversation -abc\n' });
  expect((await run(['chat', '-m', 'local/echo', '-cq', '-abc', 'again'], env)).code).toBe(2);
  expect(t.requests().length).toBe(before);
  // A value of a flag is no -c; a switch cluster without c is none either.
  expect(await run(['chat', '-m', 'local/echo', '-qc', '-mlocal/echo', 'again'], env)).toMatchObject({ code: 0, stdout: 'again\n' });
  expect((await run(['conversations', 'show', '--', '-abc'], env)).stdout).toBe('user: hi\n\nassistant: hi\n\nuser: again\n\nassistant: again\n');
});

it('a tool whose command is a folder is said to be a folder, not "is it executable (chmod +x)?"', async () => {
  const folder = join(t.dir, 'weather-tool');
  mkdirSync(folder, { recursive: true });
  const tools = join(t.dir, 'folder-tool.json');
  for (const command of [[folder], `${folder} --today`]) {
    writeFileSync(tools, JSON.stringify([{ type: 'function', name: 'weather', parameters: { type: 'object', properties: {} }, command }]));
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools, '--json', 'weather']);
    expect(r.code, r.stderr).toBe(0);
    // Was: "its command could not be run (exit 126): is it executable (chmod +x)?"
    expect(r.stderr, JSON.stringify(command)).toBe(`warning: tool weather: its command could not be run (exit 126): ${folder} is a folder, not a program\n`);
  }
});

it('an MCP server command that is a folder is said to be a folder too, not "chmod +x it"', async () => {
  const folder = join(t.dir, 'mcp-server-folder');
  mkdirSync(folder, { recursive: true });
  for (const spec of [folder, `${folder} --stdio`]) {
    // Was: "could not start: the command is not executable (chmod +x it, or give its interpreter first: sh FILE)".
    expect(await run(['chat', '-m', 'local/tools', '--mcp', spec, 'hi'])).toMatchObject({ code: 12, stdout: '', stderr: `error: MCP server ${spec}: could not start: ${folder} is a folder, not a program\n` });
  }
});

it('a --jq that halts with --usage says the usage is not known yet and where it will be, not "usage: not reported"', async () => {
  for (const command of ['chat', 'responses']) {
    const env = { ROUTER_STATE_DIR: join(t.dir, `halt-usage-${command}`) };
    const r = await run([command, '-m', 'local/lorem', '--stream', '--json', '--usage', '--jq', 'select(.id // .response.id) | (.id // .response.id), halt', '20000 words'], env);
    expect(r.code, r.stderr).toBe(0);
    const id = r.stdout.trim();
    // Was: "usage: not reported".
    expect(r.stderr, command).toBe(`usage: not known yet: --jq halted the stream before the service reported it; what ${id} was charged: router usage --reconcile puts it in the ledger\n`);
    // And it does, once the service has settled the charge.
    const { vi } = await import('vitest');
    const { SETTLE } = await import('../support/until.js');
    await vi.waitFor(async () => expect((await run(['usage', '--reconcile'], env)).stderr).toMatch(/^reconciled 1 call /), SETTLE);
    const unlogged = await run([command, '-m', 'local/lorem', '--stream', '--json', '--usage', '--no-log', '--jq', 'select(.id // .response.id) | (.id // .response.id), halt', '20000 words'], env);
    expect(unlogged.stderr).toContain(`what ${unlogged.stdout.trim()} was charged: router generation ${unlogged.stdout.trim()}\n`);
  }
});

it('--jq with input or inputs reads the values after its own, as `router … --json | jq FILTER` does', async () => {
  const chunks = (await run(['chat', '-m', 'local/echo', '--stream', '--json', 'one two three'])).stdout.trim().split('\n');
  expect(chunks.length).toBeGreaterThan(2);
  const jq = async (filter: string) => (await run(['chat', '-m', 'local/echo', '--stream', '--jq', filter, 'one two three'])).stdout;
  // Was: each value alone, where inputs is empty: "1" once a chunk, and nothing for first(inputs).
  expect(await jq('[., inputs] | length')).toBe(`${chunks.length}\n`);
  expect(await jq('[inputs] | length')).toBe(`${chunks.length - 1}\n`);
  // Not jq -n: the first value is `.`, so first(inputs) is the second, then the fourth, ….
  expect((await jq('first(inputs) | .choices[0].delta.content')).split('\n')[0]).toBe(' two');
  expect((await jq('limit(1; inputs) | .choices[0].delta.content')).split('\n')[0]).toBe(' two');
});

it('--schema with --jq filters the answer the schema asked for; with --json too, the completion as before', async () => {
  const schema = join(t.dir, 'n.json');
  writeFileSync(schema, JSON.stringify({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }));
  for (const command of ['chat', 'responses']) {
    for (const stream of ['--stream', '--no-stream']) {
      // Was: null (the completion has no .n).
      const r = await run([command, '-m', 'local/lorem', '--schema', schema, stream, '--jq', '.n | type', 'a number']);
      expect(r, `${command} ${stream}`).toMatchObject({ code: 0, stdout: 'number\n', stderr: '' });
    }
    expect((await run([command, '-m', 'local/lorem', '--schema', schema, '--json', '--jq', '.n', 'a number'])).stdout).toBe('null\n');
    expect((await run([command, '-m', 'local/lorem', '--schema', schema, '--jq', '.n', '--', '--json'])).stdout).toMatch(/^\d+\n$/);
  }
});

it('roles show hides the password of an MCP server URL in a role, as config list does; the system prompt is as written', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'roles-mcp') };
  const saved = await run(['roles', 'save', 'remote', '--system', 'mail me at a@b.example', '--mcp', 'http://me:s3cret@127.0.0.1:9/mcp', '--mcp', 'npx srv --url=https://u:p%40ss@h.example/x'], env);
  expect(saved.code, saved.stderr).toBe(0);
  const shown = await run(['roles', 'show', 'remote'], env);
  // Was: the file as written, passwords and all.
  expect(shown).toMatchObject({ code: 0, stdout: '---\nmcp:\n  - http://***@127.0.0.1:9/mcp\n  - npx srv --url=https://***@h.example/x\n---\nmail me at a@b.example\n' });
  const json = JSON.parse((await run(['roles', 'show', 'remote', '--json'], env)).stdout) as { settings: { mcp: string[] } };
  expect(json.settings.mcp).toEqual(['http://***@127.0.0.1:9/mcp', 'npx srv --url=https://***@h.example/x']);
  // The help says so (it said "print a role file as it is").
  expect((await run(['roles', '--help'], env)).stdout).toMatch(/show <name> +print a role file, a URL's password as \*\*\*\n/);
});

it('a ledger line that cannot be written is said on stderr without a budget and without --verbose, once', async () => {
  const state = join(t.dir, 'ledger-device');
  mkdirSync(state, { recursive: true });
  const ledger = join(state, 'usage.jsonl');
  symlinkSync('/dev/full', ledger);
  const r = await run(['chat', '-m', 'local/echo', 'hi'], { ROUTER_STATE_DIR: state });
  // Was: nothing said unless --verbose (usage then misses the call in silence).
  expect(r).toMatchObject({ code: 0, stdout: 'hi\n', stderr: `warning: the usage ledger ${ledger} could not be written (not a regular file (a device, a FIFO or a socket)): router usage will not count this call\n` });
  // Two calls (a tool's round and the answer): one line.
  const tools = join(t.dir, 'ledger-tools.json');
  writeFileSync(tools, JSON.stringify([{ type: 'function', name: 'weather', parameters: { type: 'object', properties: {} }, command: ['echo', 'sunny'] }]));
  const looped = await run(['chat', '-m', 'local/tools', '--tools', tools, 'weather'], { ROUTER_STATE_DIR: state });
  expect(looped.code, looped.stderr).toBe(0);
  expect(looped.stderr.match(/could not be written/g)).toHaveLength(1);
});

it('a proxy whose name does not resolve is named, not the API root it was to reach', async () => {
  const proxies = { http_proxy: '', https_proxy: '', no_proxy: '', NO_PROXY: '', HTTP_PROXY: 'http://no-such-proxy.invalid:3128', HTTPS_PROXY: 'http://no-such-proxy.invalid:3128' };
  const r = await run(['--max-retries', '0', 'chat', '-m', 'local/echo', 'hi'], { ...proxies, ROUTER_API_ROOT: 'http://router.invalid:8080/api' });
  // Was: "host not reachable: router.invalid:8080 (the API root from ROUTER_API_ROOT)".
  expect(r).toMatchObject({ code: 8, stdout: '', stderr: 'warning: the API key goes to router.invalid:8080 over plain http://, unencrypted: anyone on the way can read it (use https://)\nerror: host not reachable: the proxy no-such-proxy.invalid:3128, on the way to router.invalid:8080 (the proxy from HTTP_PROXY)\n' });
  // The variable that applies is named: https_proxy for an https root.
  const https = await run(['--max-retries', '0', 'chat', '-m', 'local/echo', 'hi'], { ...proxies, HTTPS_PROXY: '', https_proxy: 'http://127.0.0.1:1', ROUTER_API_ROOT: 'https://router.invalid/api' });
  expect(https).toMatchObject({ code: 8, stderr: 'error: connection refused: the proxy 127.0.0.1:1, on the way to router.invalid (the proxy from https_proxy)\n' });
});
