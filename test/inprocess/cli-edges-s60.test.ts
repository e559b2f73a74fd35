import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../../src/emulator/server.js';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { runProcess } from '../support/run-process.js';
import { BIN } from '../helpers.js';
import { startFixtureServer } from '../support/fixture-server.js';

// The CLI's edges closing note 13 left (task c6): each said in one line, with the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('config get, config list and roles show hide only the secret parts of an mcp line (one function)', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'config-mcp-secrets') };
  const token = 'a1b2c3d4e5f6a7b8c9d0e1f2';
  const mcp = [
    `https://me:s3cret@mcp.example/mcp?session=s3ssion&page=2&sig=${token}`,
    'npx mcp-remote https://mcp.example/sse --header "Authorization: Bearer sk-abcdef123456"',
    'env GITHUB_TOKEN=ghp_0123456789 npx -y @modelcontextprotocol/server-github',
    `https://mcp.example/x?q=${token}`,
  ].join('\n');
  const shown = [
    'https://***@mcp.example/mcp?session=***&page=2&sig=***',
    'npx mcp-remote https://mcp.example/sse --header "Authorization: Bearer ***"',
    'env GITHUB_TOKEN=*** npx -y @modelcontextprotocol/server-github',
    'https://mcp.example/x?q=***',
  ].join('\n');
  expect((await run(['config', 'set', 'mcp', mcp], env)).code).toBe(0);
  // Was: the query's session and token, the header's bearer token and the variable's token as stored.
  expect(await run(['config', 'get', 'mcp'], env)).toMatchObject({ code: 0, stdout: `${shown}\n` });
  const list = await run(['config', 'list', '--json'], env);
  expect(list.code, list.stderr).toBe(0);
  expect(JSON.parse(list.stdout).profiles[0].mcp).toBe(shown);
  const overridden = await run(['config', 'get', 'mcp', '--verbose'], { ...env, ROUTER_MCP: 'npx srv --header X-Api-Key:k3y' });
  expect(overridden.stderr).toContain('ROUTER_MCP is set (npx srv --header X-Api-Key:***) and goes before this setting');
  const role = await run(['roles', 'save', 'remote', '--system', 'terse', '--max-tokens', '100', '--mcp', mcp.split('\n')[1]!], env);
  expect(role.code, role.stderr).toBe(0);
  // The file's text: its long line folded (the token on the next line), the max-tokens key no header.
  const text = (await run(['roles', 'show', 'remote'], env)).stdout;
  expect(text).toMatch(/--header "Authorization: Bearer\s+\*\*\*"/);
  expect(text).toContain('max-tokens: 100\n');
  expect(text).not.toContain('sk-abcdef');
  const json = JSON.parse((await run(['roles', 'show', 'remote', '--json'], env)).stdout);
  expect(json.settings.mcp).toEqual([shown.split('\n')[1]]);
});

it('every command\'s help shows the global options (commander\'s showGlobalOptions reaches subcommands)', async () => {
  const { buildProgram } = await import('../../src/cli/main.js');
  const { commandTree } = await import('../../src/cli/commands/completion/tree.js');
  const paths = commandTree(await buildProgram()).filter((n) => n.path).map((n) => n.path.split(' '));
  expect(paths.length).toBeGreaterThan(40);
  for (const path of paths) {
    const r = await run([...path, '--help']);
    expect(r.code, path.join(' ')).toBe(0);
    // Was: only `router --help` had them; `router chat --help` said nothing of -p or --api-root.
    const globals = r.stdout.split('\nGlobal Options:\n')[1];
    expect(globals, path.join(' ')).toBeDefined();
    expect(globals).toMatch(/^ {2}-p, --profile <name> /m);
    expect(globals).toMatch(/^ {2}--api-root <url> /m);
  }
});

it('an editor that is not installed: our one line on stderr, not the shell\'s "not found" above it (a process shows it)', async () => {
  const env = { ...process.env, ...t.env, ROUTER_CONFIG_DIR: join(t.dir, 'config-no-editor'), VISUAL: '', EDITOR: 'no-such-editor-here --wait' };
  const r = await runProcess(process.execPath, [BIN, 'roles', 'edit', 'poet'], { env });
  // Was: "sh: 1: no-such-editor-here: not found" first.
  expect(r).toMatchObject({ status: 1, stdout: '', stderr: 'error: the editor no-such-editor-here (from $EDITOR: no-such-editor-here --wait) was not found: set $VISUAL or $EDITOR to one that is installed (nano, vim, code --wait); role poet is not made\n' });
  // One that is there still runs through the shell (its words, a redirection).
  const made = await runProcess(process.execPath, [BIN, 'roles', 'edit', 'poet'], { env: { ...env, EDITOR: 'echo You are terse. >' } });
  expect(made.stderr).not.toMatch(/error/);
  expect(made.status).toBe(0);
});

it('config set api_root with no path: one warning naming the root with /api, unless the root answers as the API; set either way', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'config-pathless') };
  const bare = t.apiRoot.replace(/\/api$/, '');
  // router serve's root without its /api: every route is under /api/v1.
  const r = await run(['config', 'set', 'api_root', bare], env);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe(`warning: api_root ${bare} has no path and ${bare}/v1/models does not answer: an API root is most often the URL before /v1, such as ${bare}/api as router serve prints it; set all the same\n`);
  expect((await run(['config', 'get', 'api_root'], env)).stdout).toBe(`${bare}\n`);
  // A gateway mounted at the root path answers there (here a 401 of its own: no key given): nothing said.
  const gateway = await startFixtureServer({ 'GET /v1/models': { status: 401, body: { error: { code: 401, message: 'no key' } } } });
  try {
    const root = gateway.apiRoot.replace(/\/api$/, '');
    expect(await run(['config', 'set', 'api_root', root], env)).toMatchObject({ code: 0, stderr: '' });
    expect(gateway.requests.map((q) => `${q.method} ${q.url}`)).toEqual(['GET /v1/models?output_modalities=all']);
  } finally {
    await gateway.close();
  }
  // A web server's own error page there is no answer of the API. Before: a 500 or 401 of HTML was taken for one, nothing said.
  for (const status of [500, 401]) {
    const site = await startFixtureServer({ 'GET /v1/models': { status, contentType: 'text/html', body: `<html><body>${status}</body></html>` } });
    try {
      const root = site.apiRoot.replace(/\/api$/, '');
      const r2 = await run(['config', 'set', 'api_root', root], env);
      expect({ code: r2.code, stderr: r2.stderr }).toEqual({ code: 0, stderr: expect.stringMatching(new RegExp(`^warning: api_root ${root} has no path and ${root}/v1/models does not answer: .*; set all the same\n$`)) });
    } finally {
      await site.close();
    }
  }
  // A root with a path is not asked.
  expect(await run(['config', 'set', 'api_root', t.apiRoot], env)).toMatchObject({ code: 0, stderr: '' });
});

it('usage --reconcile after serve restarted with a new state on the same root: its calls unknown there said once, not "not known yet" for an hour', async () => {
  const state = join(t.dir, 'reconcile-reset-cli');
  const first = await startEmulator({ stateDir: join(t.dir, 'reconcile-reset-a'), port: 0, batchDelayMs: 0 });
  const env = (emu: typeof first) => ({ ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: emu.store.firstKeys().apiKey, ROUTER_STATE_DIR: state });
  for (const word of ['one', 'two']) expect((await run(['chat', '--model', 'local/echo', word], env(first))).code).toBe(0);
  const port = first.port;
  await first.close();
  const second = await startEmulator({ stateDir: join(t.dir, 'reconcile-reset-b'), port, batchDelayMs: 0 });
  try {
    // The old calls made ten minutes before the restart (their ledger lines say so).
    const ledger = join(state, 'usage.jsonl');
    const before = new Date(Date.now() - 10 * 60 * 1000).toISOString();
    writeFileSync(ledger, readFileSync(ledger, 'utf8').replace(/"time":"[^"]+"/g, `"time":"${before}"`));
    expect((await run(['chat', '--model', 'local/echo', 'three'], env(second))).code).toBe(0);
    const r = await run(['usage', '--reconcile', '--json'], env(second));
    expect(r.code, r.stderr).toBe(0);
    // Was: "reconciled 1 call …; 2 not known to the service yet; 2 left", and so on each run for an hour.
    expect(r.stderr).toMatch(/^reconciled 1 call of profile "default": .*; unknown to this server: 2 calls made before others it knows, probably at an emulator whose state was reset \(marked, not asked again\); none left$/m);
    expect(JSON.parse(r.stdout)).toMatchObject({ unknown_here: [expect.stringMatching(/^gen-/), expect.stringMatching(/^gen-/)], pending: [], left: 0 });
    // Said once.
    expect((await run(['usage', '--reconcile'], env(second))).stderr).toMatch(/^reconciled 0 calls of profile "default"; none left$/m);
  } finally {
    await second.close();
  }
});

it('a route of the service router serve does not serve: its 404 names the route, the CLI adds where the emulator page is', async () => {
  // What any HTTP client reads: the route and that router serve does not serve it, no path of this package's docs.
  const res = await fetch(`${t.apiRoot}/v1/rerank`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body: '{}' });
  expect([res.status, ((await res.json()) as { error: { message: string } }).error.message]).toEqual([404, "No route for POST /v1/rerank: the service's OpenAPI has it; router serve does not serve it"]);
  // Was: "(docs/emulator.md lists what it serves)", a path no HTTP client (nor an installed package's user) can open.
  const page = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'docs', 'emulator.md');
  const r = await run(['api', '/v1/rerank', '-X', 'POST', '-f', 'query=x']);
  expect(r.code).toBe(5);
  expect(r.stderr).toBe(`error: POST /api/v1/rerank: 404 Not Found: No route for POST /v1/rerank: the service's OpenAPI has it; router serve does not serve it (what it serves: ${page})\n`);
});
