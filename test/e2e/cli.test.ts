// What only a process shows: the help the build rendered, a terminal (completions: test/inprocess/completion).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, startTestEnv } from '../helpers.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startTestEnv());

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

// In a real terminal (tmux), each key typed once the screen shows the prompt that reads it: typed ahead, a terminal
// echoes what it holds (a key in clear) and a prompt may never see it.
describe.skipIf(!HAS_TMUX)('router chat -i', () => {
  it('keeps the conversation across turns in a pseudo-terminal, and /save writes it', async () => {
    t.clearRequests();
    const saved = join(t.dir, 'conv.json');
    const ledger = join(t.env.ROUTER_STATE_DIR!, 'usage.jsonl');
    const ledgerLines = () => (existsSync(ledger) ? readFileSync(ledger, 'utf8').trim().split('\n').filter(Boolean) : []);
    const before = ledgerLines().length;
    const term = new Terminal({ ...t.env });
    try {
      term.run(`node ${BIN} chat -i --model local/echo`);
      await term.waitFor(/^>\s*$/m);
      term.run('hello there');
      await term.waitFor(/^hello there\n>\s*$/m);
      term.run('/system be brief');
      await term.waitFor(/^system message set\n>\s*$/m);
      term.run('second turn');
      await term.waitFor(/^second turn\n>\s*$/m);
      term.run(`/save ${saved}`);
      await term.waitFor(/saved 5 messages to \S*conv\.json\n>\s*$/m);
      term.run('/exit');
      expect(await term.lastExit()).toBe(0);
    } finally {
      await term.close();
    }
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

describe.skipIf(!HAS_TMUX)('router config init', () => {
  it('asks for root, hidden keys and model in a terminal, and writes the profile', async () => {
    const cfg = join(t.dir, 'init-config');
    const term = new Terminal({ ROUTER_CONFIG_DIR: cfg, ROUTER_API_KEY: '', ROUTER_API_ROOT: '', ROUTER_MANAGEMENT_KEY: '' });
    let screen: string;
    try {
      term.run(`node ${BIN} config init --profile fresh`);
      await term.waitFor(/\? API root[^\n]*\s*$/);
      term.run(t.apiRoot);
      await term.waitFor(/\? API key\s*$/);
      term.run(t.apiKey);
      await term.waitFor(/\? Management key, for speak and decide[^\n]*\s*$/);
      term.run(t.managementKey);
      await term.waitFor(/\? Default model[^\n]*\s*$/);
      term.run('local/echo');
      expect(await term.lastExit()).toBe(0);
      screen = await term.screen();
    } finally {
      await term.close();
    }
    expect(screen).not.toContain(t.apiKey);
    expect(screen).not.toContain(t.managementKey);
    expect(screen).toMatch(/saved profile "fresh"/);
    const list = await t.run(['config', 'list', '--json'], { env: { ROUTER_CONFIG_DIR: cfg, ROUTER_API_KEY: '', ROUTER_API_ROOT: '' } });
    expect(JSON.parse(list.stdout).profiles[0]).toMatchObject({ name: 'fresh', api_root: t.apiRoot, model: 'local/echo', api_key: `${t.apiKey.slice(0, 6)}…${t.apiKey.slice(-4)}`, management_key: `${t.managementKey.slice(0, 6)}…${t.managementKey.slice(-4)}` });
    const chat = await t.run(['chat', 'through init'], { env: { ROUTER_CONFIG_DIR: cfg, ROUTER_API_KEY: '', ROUTER_API_ROOT: '' } });
    expect(chat.stdout).toBe('through init\n');
  });
});
