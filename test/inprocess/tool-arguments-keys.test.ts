import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureMain, startCliEnv, type CliEnv } from '../support/cli-env.js';
import { RouterClient } from '../../src/client/index.js';
import { chatModel, chatWithTools, commandTool, type CallOutcome } from '../../src/kit/index.js';

// A model that read a key in the prompt may write it into a tool call (local/tools puts the prompt in the call's first
// string argument). No tool or MCP server is given a key router knows: a script tool reads `****` on stdin, an MCP server
// gets `****` in its tools/call arguments, and the run says so once on stderr (docs/keys.md). The library's loops too.
const ROOT = resolve(import.meta.dirname, '..', '..');
const FIXTURE = join(ROOT, 'test/support/mcp-fixture-server.mjs');
/** Known by its keychain mark only. */
const KEY = `sk-or-v1-${'c3d4'.repeat(16)}`;
/** Another profile's key kept in the config file. */
const OTHER = 'sk-rt-other-profile-fedcba9876543210';
const SALT = '1e'.repeat(16);
const MARK = `sha256:${KEY.length}:sk-or-v1-:${SALT}:${createHash('sha256').update(SALT).update(KEY).digest('hex')}`;
const WARNING = 'warning: the model wrote a key router knows (****) into a tool call: the tool was given **** in its place';
const PARAMS = { type: 'object', properties: { text: { type: 'string' } } };
let t: CliEnv;
let script: string;

async function run(args: string[]) {
  const { code, out, err } = await captureMain(args, { input: Buffer.alloc(0), env: { ...process.env, FORCE_COLOR: undefined, ...t.env } });
  return { code, stdout: out.toString('utf8'), stderr: err.toString('utf8') };
}

/** What a tool was given holds none of the keys, nor a 16-character start of one; it holds **** where they stood. */
function holdsNoKey(seen: string, keys: string[]) {
  for (const k of keys) expect(seen).not.toContain(k.slice(0, 16));
  expect(seen).toContain('****');
}

beforeAll(async () => {
  t = await startCliEnv();
  const profiles = { work: { api_key_keychain: 'work/api_key (elsewhere)', api_key_keychain_mark: MARK }, other: { api_key: OTHER } };
  mkdirSync(t.env.ROUTER_CONFIG_DIR!, { recursive: true, mode: 0o700 });
  writeFileSync(join(t.env.ROUTER_CONFIG_DIR!, 'config.json'), JSON.stringify({ current: 'default', profiles }), { mode: 0o600 });
  // A real script: logs its arguments and its stdin (the call's arguments) beside itself.
  script = join(t.dir, 'log-tool.sh');
  writeFileSync(script, '#!/bin/sh\nlog="$1"; shift\nprintf "args: %s\\n" "$*" >> "$log"\ncat >> "$log"\necho >> "$log"\necho logged\n');
  chmodSync(script, 0o755);
});
afterAll(() => t.close());

describe('a key the model writes into a tool call', () => {
  const keys = () => [KEY, OTHER, t.apiKey];
  const prompt = () => `note ${KEY} and ${OTHER} and ${t.apiKey} please`;

  it('chat: the script tool reads **** on stdin, and stderr says so once', async () => {
    const log = join(t.dir, 'chat.log');
    const tools = join(t.dir, 'chat-tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'note', parameters: PARAMS }, command: [script, log, 'fixed'] }]));
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools, prompt()]);
    expect(r.code, r.stderr).toBe(0);
    const seen = readFileSync(log, 'utf8');
    expect(seen).toContain('args: fixed\n{"text":"note **** and **** and **** please"}');
    holdsNoKey(seen, keys());
    expect(r.stderr.split(WARNING).length - 1).toBe(1);
    expect(r.stdout + r.stderr).not.toContain(KEY.slice(0, 16));
  });

  it('responses: the same', async () => {
    const log = join(t.dir, 'responses.log');
    const tools = join(t.dir, 'responses-tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', name: 'note', parameters: PARAMS, command: [script, log, 'fixed'] }]));
    const r = await run(['responses', '--model', 'local/tools', '--tools', tools, prompt()]);
    expect(r.code, r.stderr).toBe(0);
    holdsNoKey(readFileSync(log, 'utf8'), keys());
    expect(r.stderr).toContain(WARNING);
  });

  it('an MCP server gets **** in its tools/call arguments', async () => {
    const base = join(t.dir, 'mcp');
    const r = await run(['chat', '--model', 'local/tools', '--mcp', `'${process.execPath}' '${FIXTURE}' log '${base}'`, prompt()]);
    expect(r.code, r.stderr).toBe(0);
    const seen = readFileSync(`${base}.args`, 'utf8');
    expect(JSON.parse(seen)).toEqual({ text: 'note **** and **** and **** please' });
    holdsNoKey(seen, keys());
    expect(r.stderr).toContain(WARNING);
  });

  it('a call without a key is passed on as the model wrote it, and not said', async () => {
    const log = join(t.dir, 'plain.log');
    const tools = join(t.dir, 'plain-tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'note', parameters: PARAMS }, command: [script, log] }]));
    const r = await run(['chat', '--model', 'local/tools', '--tools', tools, 'no key sk-or-v1- here']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(log, 'utf8')).toContain('{"text":"no key sk-or-v1- here"}');
    expect(r.stderr).not.toContain('warning');
  });

  it('the library (prompt, chatWithTools): the tool gets the client\'s key as ****, the outcome says so', async () => {
    const log = join(t.dir, 'library.log');
    const client = new RouterClient({ apiKey: t.apiKey, apiRoot: t.apiRoot });
    try {
      const tools = [commandTool({ name: 'note', parameters: PARAMS }, [script, log])];
      const said = `keep ${t.apiKey} safe`;
      const prompted = await chatModel(client, 'local/tools').prompt(said, { tools });
      const outcomes: CallOutcome[] = prompted.toolCalls.map((c) => c.outcome);
      await chatWithTools(client, { model: 'local/tools', messages: [{ role: 'user', content: said }] }, { tools: new Map(tools.map((x) => [x.name, x])), on: { call: (_, o) => outcomes.push(o) } });
      expect(outcomes.map((o) => o.keysHidden)).toEqual([true, true]);
      const seen = readFileSync(log, 'utf8');
      expect(seen.match(/\{"text":"keep \*\*\*\* safe"\}/g)?.length).toBe(2);
      holdsNoKey(seen, [t.apiKey]);
    } finally {
      await client.close();
    }
  });
});
