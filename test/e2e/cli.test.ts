// What only a process shows: the help the build rendered, a terminal (completions: test/inprocess/completion).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';

let t: TestEnv;
beforeAll(async () => {
  t = await startTestEnv();
});
afterAll(() => t.close());

describe('help and output conventions', () => {
  it('router --help off a terminal (the text the build rendered) is what the command tree prints', async () => {
    const quick = await t.run(['--help']);
    const live = spawnSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(resolve(BIN, '..', '..', 'dist', 'cli', 'main.js'))}); process.exitCode = await m.main(['node', 'router', '--help']);`], { encoding: 'utf8' });
    expect(quick.code).toBe(0);
    expect(live.status).toBe(0);
    expect(live.stdout).toMatch(/^Usage: router \[options\] \[command\]\n/);
    expect(quick.stdout).toBe(live.stdout);
    expect((await t.run(['-h'])).stdout).toBe(live.stdout);
  });

  it('refuses to write audio to a terminal', () => {
    const r = spawnSync('script', ['-qfec', `node ${BIN} speak hi --voice alloy --model local/tts`, '/dev/null'], {
      env: { ...process.env, ...t.env, ROUTER_MANAGEMENT_KEY: t.managementKey },
      encoding: 'utf8',
    });
    expect(r.stdout).toMatch(/refusing to write audio to a terminal/);
    expect(r.status).toBe(2);
  });
});

describe('router chat -i', () => {
  it('keeps the conversation across turns in a pseudo-terminal, and /save writes it', async () => {
    t.clearRequests();
    const saved = join(t.dir, 'conv.json');
    const feed = `(sleep 0.6; printf 'hello there\\r'; sleep 0.6; printf '/system be brief\\r'; sleep 0.3; printf 'second turn\\r'; sleep 0.6; printf '/save ${saved}\\r'; sleep 0.4; printf '/exit\\r'; sleep 0.3)`;
    // Asynchronous: the emulator answers from this process, so it must not be blocked.
    const ledger = join(t.env.ROUTER_STATE_DIR!, 'usage.jsonl');
    const ledgerLines = () => (existsSync(ledger) ? readFileSync(ledger, 'utf8').trim().split('\n').filter(Boolean) : []);
    const before = ledgerLines().length;
    const child = spawn('bash', ['-c', `${feed} | script -qfec "node ${BIN} chat -i --model local/echo" /dev/null`], { env: { ...process.env, ...t.env } });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    await new Promise((done) => child.on('close', done));
    const r = { stdout };
    expect(r.stdout.replace(/\r/g, '')).toMatch(/hello there\n[\s\S]*second turn\n/);
    const chats = t.requests().filter((q) => q.path === '/v1/chat/completions');
    expect(chats).toHaveLength(2);
    expect(chats[1]!.body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello there' },
      { role: 'assistant', content: 'hello there' },
      { role: 'user', content: 'second turn' },
    ]);
    expect(JSON.parse(readFileSync(saved, 'utf8')).messages).toHaveLength(5);
    // Each turn is a ledger line holding its answer's id, as a one-shot chat's is.
    const turns = ledgerLines().slice(before).map((l) => JSON.parse(l) as { command: string; id?: string });
    expect(turns.map((l) => [l.command, l.id])).toEqual([['chat', expect.stringMatching(/^gen-/)], ['chat', expect.stringMatching(/^gen-/)]]);
  });

});
describe('router config init', () => {
  it('asks for root, hidden keys and model in a terminal, and writes the profile', async () => {
    const cfg = join(t.dir, 'init-config');
    const feed = `(sleep 0.8; printf '${t.apiRoot}\\r'; sleep 0.4; printf '${t.apiKey}\\r'; sleep 0.4; printf '${t.managementKey}\\r'; sleep 0.4; printf 'local/echo\\r'; sleep 0.5)`;
    const child = spawn('bash', ['-c', `${feed} | script -qfec "node ${BIN} config init --profile fresh" /dev/null`], { env: { ...process.env, ROUTER_CONFIG_DIR: cfg } });
    let screen = '';
    child.stdout.on('data', (c) => (screen += c));
    await new Promise((done) => child.on('close', done));
    expect(screen).not.toContain(t.apiKey);
    expect(screen).not.toContain(t.managementKey);
    expect(screen).toMatch(/Management key, for speak and decide/);
    const list = await t.run(['config', 'list', '--json'], { env: { ROUTER_CONFIG_DIR: cfg, ROUTER_API_KEY: '', ROUTER_API_ROOT: '' } });
    expect(JSON.parse(list.stdout).profiles[0]).toMatchObject({ name: 'fresh', api_root: t.apiRoot, model: 'local/echo', api_key: `${t.apiKey.slice(0, 6)}…${t.apiKey.slice(-4)}`, management_key: `${t.managementKey.slice(0, 6)}…${t.managementKey.slice(-4)}` });
    const chat = await t.run(['chat', 'through init'], { env: { ROUTER_CONFIG_DIR: cfg, ROUTER_API_KEY: '', ROUTER_API_ROOT: '' } });
    expect(chat.stdout).toBe('through init\n');
  });
});
