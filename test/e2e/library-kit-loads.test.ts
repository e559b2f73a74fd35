import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// What `import('router-cli/kit')` loads in a program of its own (the built package, by its name): a program that
// imports it for one feature does not pay for the others. A feature's modules (MCP's connection, reconcile's steps, a command's process group, the budgets' words,
// the answer's reading of a prompt, a fragment's HTTP client, an embedding's decoding, a profile's client; undici and the SDKs) are
// loaded by its first use, and its errors keep their classes. Module hooks of this program only list what node loads.
const ROOT = resolve(import.meta.dirname, '..', '..');

/** Writes each module node loads (ES modules, and CommonJS ones loaded through import) to the file LOADED_LOG names. */
const HOOKS = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(process.env.LOADED_LOG, url + '\\n'); return next(url, context); }`;

const PROGRAM = `
import { register, createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
register('data:text/javascript,' + encodeURIComponent(process.env.HOOKS));
const loaded = () => [...new Set(readFileSync(process.env.LOADED_LOG, 'utf8').split('\\n').filter((u) => u.startsWith('file:')).map((u) => u.replace(/^.*?\\/(dist|node_modules)\\//, '$1/')))];
const required = () => Object.keys(createRequire(import.meta.url).cache).map((p) => p.replace(/^.*?\\/node_modules\\//, 'node_modules/'));
const kit = await import('router-cli/kit');
const steps = { imported: { loaded: loaded(), required: required() } };
const { RouterClient } = await import('router-cli');
const client = new RouterClient({ apiKey: process.env.ROUTER_API_KEY, apiRoot: process.env.ROUTER_API_ROOT });
const caught = (p) => p.then(() => 'no error', (e) => e);
const use = async (name, fn) => {
  const before = new Set(loaded());
  const result = await fn();
  steps[name] = { result, loaded: loaded().filter((f) => !before.has(f)) };
};
await use('prompt', async () => (await kit.chatModel(client, 'local/echo').prompt('hello', { onText: () => {} })).text);
await use('reconcile', async () => (await kit.reconcile({ env: process.env, profile: 'default', client, limit: 5, signal: new AbortController().signal })).report.checked);
await use('command', async () => [(await kit.runCommand(['true'], '', new AbortController().signal)).code, (await kit.commandTool({ name: 'none' }, ['no-such-command-here']).run({}, new AbortController().signal)).code]);
await use('budgets', async () => (await kit.budgetsFor(process.env, kit.budgetLimits({ profile: 'default', daily: 1 }))).map((b) => [b.name, b.limit, b.spent]));
await use('mcp', async () => { const e = await caught(kit.connectMcp('no-such-mcp-server-here', { env: {} })); return [e instanceof kit.ToolSourceError, e.kind]; });
await use('fragment', async () => { const e = await caught(kit.fetchFragment(process.env.ROUTER_API_ROOT + '/no-such-fragment', { maxRetries: 0 })); return [e instanceof kit.FragmentError, e.code]; });
await use('embed', async () => (await kit.embedTexts({ model: 'local/embed', dimensions: null }, ['one'], { client })).length);
await use('profile', async () => { const c = await kit.clientFromProfile({ env: process.env }); try { return (await kit.chatModel(c, 'local/echo').prompt('profiled')).text; } finally { await c.close(); } });
await client.close();
process.stdout.write(JSON.stringify(steps));
`;

/** The kit's own modules of a feature, loaded by its first use. */
const FEATURES = {
  reconcile: ['dist/kit/spend/reconcile-asked.js', 'dist/kit/spend/reconcile-held.js', 'dist/kit/spend/reconcile-batch.js', 'dist/kit/spend/reconcile-sent.js', 'dist/kit/spend/reconcile-joint.js', 'dist/kit/spend/lookup-bound.js', 'dist/kit/spend/sent-link.js'],
  command: ['dist/internal/process-group.js', 'dist/kit/project-bin.js'],
  budgets: ['dist/config/settings.js'],
  profile: ['dist/config/client-settings.js'],
  mcp: ['dist/kit/mcp-stdio.js', 'dist/kit/mcp-content.js', 'dist/kit/mcp-call.js', 'dist/kit/mcp-config-file.js', 'dist/kit/mcp-data-file.js', 'dist/kit/mcp-not-mcp.js'],
};
/**
 * What the kit's features load of the client (a prompt's reading of the answer, a fragment's HTTP client, an embedding's
 * decoding, undici), which a program using the client has loaded already; the SDKs of features not used here.
 */
const NOT_AT_IMPORT = [
  ...['answer-reading', 'message-assembler', 'resources/chat', 'resources/embeddings', 'core', 'transport', 'undici'].map((m) => `dist/client/${m}.js`),
  'dist/config/proxy.js',
  // A profile's key: read from the keychain (or a key command) by the call that needs it only.
  'dist/config/key-source.js',
  'dist/config/keychain.js',
  'node_modules/@napi-rs/',
  ...['@modelcontextprotocol/', 'ajv/', 'zod/', 'chalk/', 'undici/'].map((m) => `node_modules/${m}`),
];

const t = startedForAll(() => startCliEnv());

function runProgram(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    // In the package's folder, so that its name resolves to itself (as it does where it is installed).
    const child = spawn(process.execPath, ['--input-type=module', '-e', PROGRAM], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

type Steps = Record<'imported', { loaded: string[]; required: string[] }> & Record<'prompt' | 'reconcile' | 'command' | 'budgets' | 'mcp' | 'fragment' | 'embed' | 'profile', { result: unknown; loaded: string[] }>;

it("importing the kit loads none of a feature's modules; its first use does, and its errors keep their classes", async () => {
  const r = await runProgram({ ...t.env, HOOKS, LOADED_LOG: resolve(t.dir, 'loaded-modules.txt') });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const steps = JSON.parse(r.stdout) as Steps;
  const atImport = [...steps.imported.loaded, ...steps.imported.required];
  expect(atImport).toContain('dist/kit/index.js');
  const early = [...Object.values(FEATURES).flat(), ...NOT_AT_IMPORT].filter((m) => atImport.some((f) => f.startsWith(m)));
  expect(early).toEqual([]);
  expect(steps.prompt.result).toBe('hello');
  expect(steps.reconcile.result).toBe(0);
  expect(steps.command.result).toEqual([0, 127]);
  expect(steps.budgets.result).toEqual([['daily_budget', 1, 0]]);
  expect(steps.mcp.result).toEqual([true, 'start']);
  expect(steps.fragment.result).toEqual([true, 'fetch_failed']);
  expect(steps.embed.result).toBe(1);
  expect(steps.profile.result).toBe('profiled');
  // The key in the environment: the keychain's code is not loaded for it.
  expect(steps.profile.loaded.filter((m) => /keychain|key-source|@napi-rs/.test(m))).toEqual([]);
  for (const [feature, modules] of Object.entries(FEATURES)) {
    expect({ feature, loaded: modules.filter((m) => steps[feature as keyof typeof FEATURES].loaded.includes(m)) }).toEqual({ feature, loaded: modules });
  }
});
