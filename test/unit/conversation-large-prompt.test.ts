import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { newConversationRecord } from '../../src/kit/conversation-store.js';

// A conversation started by a very large prompt (task c8): kept without copies of it many times over.

it('a title is the first words, spaces made one, as the whole text with every run of white space replaced would give', () => {
  const texts = ['', '   ', 'one', '  two  words  ', '\n\ttabs\u00a0and\u2028lines\r\n', 'x'.repeat(100), `${'a '.repeat(40)}end`, `  ${'word '.repeat(30)}`, `${'é'.repeat(59)}😀 tail`, `${'w'.repeat(59)} 😀`];
  for (const text of texts) expect(newConversationRecord('m', text).title, JSON.stringify(text)).toBe(text.replace(/\s+/g, ' ').trim().slice(0, 60));
});

it('a conversation of a 20 MB prompt is titled and kept within a 48 MB heap', () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-c8-large-'));
  const store = JSON.stringify(join(import.meta.dirname, '../../src/kit/conversation-store.ts'));
  const script = `import(${store}).then(({ ConversationStore, newConversationRecord }) => {
    const text = 'lorem ipsum dolor sit amet '.repeat(800000);
    const c = newConversationRecord('m', text, 'large');
    c.messages = [{ role: 'user', content: text }, { role: 'assistant', content: 'ok' }];
    new ConversationStore({ dir: ${JSON.stringify(dir)} }).save(c, undefined, c.messages);
  })`;
  // Was: out of memory titling it (the whole text copied with a part per white space: ~370 MB more), even with 200 MB.
  const r = spawnSync(process.execPath, ['--max-old-space-size=48', '--import', 'tsx', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr.slice(0, 2000)).toBe(0);
  const kept = JSON.parse(readFileSync(join(dir, 'large.json'), 'utf8'));
  expect(kept.title).toBe('lorem ipsum dolor sit amet '.repeat(3).slice(0, 60));
  expect(kept.messages[0].content).toHaveLength(27 * 800000);
});
