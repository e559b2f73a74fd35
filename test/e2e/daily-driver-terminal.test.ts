import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestEnv } from '../helpers.js';
import { ROUTER as router, terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX } from '../support/tmux.js';

// Issue 34 on a real terminal (tmux): the REPL's history, /edit and /role.
let t: TestEnv;
const terminal = terminalsOnEmulator((started) => (t = started));

describe.skipIf(!HAS_TMUX)('router chat -i: history, /edit, /role', () => {
  it('Up-arrow recalls a line typed in an earlier session', async () => {
    let s = await terminal();
    s.run(`${router} chat -i --model local/echo`);
    await s.waitFor(/^>\s*$/m);
    s.run('remember the otters');
    await s.waitFor(/^remember the otters\n>\s*$/m);
    s.keys('C-d');
    expect(await s.lastExit()).toBe(0);
    s = await terminal();
    s.run(`${router} chat -i --model local/echo`);
    await s.waitFor(/^>\s*$/m);
    s.keys('Up');
    await s.waitFor(/^> remember the otters$/m);
    s.keys('Enter');
    await s.waitFor(/^> remember the otters\nremember the otters\n>\s*$/m);
    s.keys('C-d');
    expect(await s.lastExit()).toBe(0);
  });

  it('/edit sends what the editor wrote; /role switches the model and the system prompt', async () => {
    const editor = join(t.dir, 'editor.sh');
    writeFileSync(editor, '#!/bin/sh\nprintf "written in the editor\\nover two lines\\n" > "$1"\n');
    chmodSync(editor, 0o755);
    expect((await t.run(['roles', 'save', 'pirate', '--system', 'Talk like a pirate.', '--model', 'local/echo'])).code).toBe(0);
    const s = await terminal({ EDITOR: editor });
    s.run(`${router} chat -i --model local/lorem`);
    await s.waitFor(/^>\s*$/m);
    let before = t.requests().length;
    s.run('/edit');
    await s.waitFor(/^written in the editor\nover two lines\n(.+\n)+>\s*$/m);
    const edited = t.requests().slice(before).find((r) => r.path.endsWith('/chat/completions'))!;
    expect(edited.body.messages.at(-1)).toEqual({ role: 'user', content: 'written in the editor\nover two lines' });
    before = t.requests().length;
    s.run('/role pirate');
    await s.waitFor(/role pirate \(model local\/echo\)/);
    s.run('ahoy');
    await s.waitFor(/^ahoy\n>\s*$/m);
    const sent = t.requests().slice(before).find((r) => r.path.endsWith('/chat/completions'))!;
    expect(sent.body.model).toBe('local/echo');
    expect(sent.body.messages[0]).toEqual({ role: 'system', content: 'Talk like a pirate.' });
    // The REPL's answers are rendered too.
    s.run('a **bold** claim');
    await s.waitFor(/^a bold claim\n>\s*$/m);
    s.keys('C-d');
    expect(await s.lastExit()).toBe(0);
  });
});

describe.skipIf(!HAS_TMUX)('router chat -i: /role after /role', () => {
  it('a second /role replaces the first: its settings do not linger; the command line\'s stay', async () => {
    expect((await t.run(['roles', 'save', 'warm', '--system', 'Be warm.', '--temperature', '1.5', '--stop', 'END', '--max-tokens', '50'])).code).toBe(0);
    expect((await t.run(['roles', 'save', 'plain', '--system', 'Be plain.', '--model', 'local/echo'])).code).toBe(0);
    const s = await terminal();
    s.run(`${router} chat -i --model local/echo --max-tokens 40`);
    await s.waitFor(/^>\s*$/m);
    s.run('/role warm');
    await s.waitFor(/role warm \(model local\/echo\)\n>\s*$/m);
    s.run('one');
    await s.waitFor(/^one\n>\s*$/m);
    const before = t.requests().length;
    s.run('/role plain');
    await s.waitFor(/role plain \(model local\/echo\)/);
    s.run('two');
    await s.waitFor(/^two\n>\s*$/m);
    const sent = t.requests().slice(before).find((r) => r.path.endsWith('/chat/completions'))!;
    expect(sent.body.messages[0]).toEqual({ role: 'system', content: 'Be plain.' });
    expect(sent.body.temperature).toBeUndefined();
    expect(sent.body.stop).toBeUndefined();
    expect(sent.body.max_completion_tokens ?? sent.body.max_tokens).toBe(40);
    s.keys('C-d');
    expect(await s.lastExit()).toBe(0);
  });
});

describe.skipIf(!HAS_TMUX)('router chat -i: /role with attachments', () => {
  it('/role of a role with -a: its attachment goes with the next message', async () => {
    const notes = join(t.dir, 'notes.md');
    writeFileSync(notes, '# Notes\nthe door code is 4711\n');
    expect((await t.run(['roles', 'save', 'withdoc', '--system', 'Answer from the notes.', '--model', 'local/echo', '-a', notes])).code).toBe(0);
    const s = await terminal();
    s.run(`${router} chat -i --model local/echo`);
    await s.waitFor(/^>\s*$/m);
    s.run('/role withdoc');
    // The prompt after the role's lines, as a person waits for it (keys typed before it were lost under load).
    await s.waitFor(/role withdoc[\s\S]*\n>\s*$/);
    const before = t.requests().length;
    s.run('what is the code?');
    // local/echo takes no file (a 400, said in one line): what was sent is what counts here.
    await s.waitFor(/^> what is the code\?\n(.+\n)+>\s*$/m);
    const sent = t.requests().slice(before).find((r) => r.path.endsWith('/chat/completions'))!;
    const content = sent.body.messages.at(-1).content as { type: string; file?: { filename: string } }[];
    expect(content.map((p) => p.type)).toEqual(['text', 'file']);
    expect(content[1]!.file!.filename).toBe('notes.md');
    s.keys('C-d');
    expect(await s.lastExit()).toBe(0);
  });
});

describe.skipIf(!HAS_TMUX)('router chat -i: the history file', () => {
  it('keeps up to 1,000 lines (not 200); a damaged line loses only itself; with logging off, nothing typed is written', async () => {
    const file = join(t.env.ROUTER_STATE_DIR!, 'repl-history');
    mkdirSync(t.env.ROUTER_STATE_DIR!, { recursive: true });
    const earlier = Array.from({ length: 200 }, (_, i) => JSON.stringify(`line ${i}`));
    writeFileSync(file, `${earlier.slice(0, 100).join('\n')}\nnot json\n${earlier.slice(100).join('\n')}\n`);
    let s = await terminal();
    s.run(`${router} chat -i --model local/echo`);
    await s.waitFor(/^>\s*$/m);
    s.run('the newest');
    await s.waitFor(/^the newest\n>\s*$/m);
    s.keys('C-d');
    expect(await s.lastExit()).toBe(0);
    const kept = readFileSync(file, 'utf8');
    // The new line is appended (sessions at once each keep theirs); the damaged line stays unread.
    expect(kept).toBe(`${earlier.slice(0, 100).join('\n')}\nnot json\n${[...earlier.slice(100), JSON.stringify('the newest')].join('\n')}\n`);
    s = await terminal();
    s.run(`${router} chat -i --no-log --model local/echo`);
    await s.waitFor(/^>\s*$/m);
    s.run('a secret');
    await s.waitFor(/^a secret\n>\s*$/m);
    s.keys('C-d');
    expect(await s.lastExit()).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(kept);
  });
});

describe.skipIf(!HAS_TMUX)('Markdown on a real terminal', () => {
  it('a streamed answer is rendered at the width of the window, and again after a resize', async () => {
    const md = `# Rivers\\n\\nThe **Danube** flows ${'through many lands '.repeat(8)}to the sea.\\n\\n| river | km |\\n|---|--:|\\n| Danube | 2850 |`;
    const s = await terminal({ NO_COLOR: '1' });
    s.run(`${router} chat --model local/echo "$(printf '${md}')"; echo DONE1`);
    let screen = await s.waitFor(/^DONE1$/m);
    const all = screen.split('\n');
    const first = all.slice(all.findIndex((l) => l.startsWith('# Rivers')), all.indexOf('DONE1'));
    expect(first[0]).toBe('# Rivers');
    expect(first.length).toBeGreaterThan(4);
    expect(first.join('\n')).not.toMatch(/\*\*|\|---/);
    expect(first.join('\n')).toMatch(/^Danube │ 2850$/m);
    for (const line of first) expect(line.length).toBeLessThanOrEqual(160);
    s.resize(40, 50);
    s.run('clear');
    s.run(`${router} chat --model local/echo "$(printf '${md}')"; echo DONE2`);
    screen = await s.waitFor(/^DONE2$/m);
    const lines = screen.split('\n');
    const second = lines.slice(lines.findIndex((l) => l.startsWith('# Rivers')), lines.indexOf('DONE2'));
    expect(second.length).toBeGreaterThan(4);
    // capture-pane -J joins lines the terminal wrapped: a line over 40 here is one the renderer did not wrap.
    for (const line of second) expect(line.length).toBeLessThanOrEqual(40);
    s.run(`${router} chat --raw --model local/echo "$(printf '${md}')" | cat; echo DONE3`);
    screen = await s.waitFor(/^DONE3$/m);
    expect(screen).toMatch(/^The \*\*Danube\*\*/m);
  });
});
