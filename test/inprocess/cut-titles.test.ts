import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// A title or a summary router makes of a user's text shows where it was cut: conversations list/show, logs, fragments list.
const t = startedForAll(() => startCliEnv());

const LONG = 'Please summarize the following quarterly report for the board and list every risk it names';

describe('a title cut from a long prompt', () => {
  it('ends in "…" wherever it is shown; a short one is whole', async () => {
    const first = await t.run(['chat', '--model', 'local/echo', '--conversation', 'long', LONG]);
    expect(first.code, first.stderr).toBe(0);
    expect((await t.run(['chat', '--model', 'local/echo', '--conversation', 'short', 'hello there'])).code).toBe(0);
    const cut = `${LONG.slice(0, 59).trimEnd()}…`;
    const titles = JSON.parse((await t.run(['conversations', 'list', '--json', 'id,title'])).stdout) as { id: string; title: string }[];
    expect(Object.fromEntries(titles.map((c) => [c.id, c.title]))).toEqual({ long: cut, short: 'hello there' });
    expect((await t.run(['conversations', 'list'])).stdout).toContain(`\t${cut}\n`);
    expect(JSON.parse((await t.run(['conversations', 'show', 'long', '--json', 'title'])).stdout)).toEqual({ title: cut });
    const logs = JSON.parse((await t.run(['logs', '--conversation', 'long', '--json', 'conversation_title'])).stdout) as { conversation_title: string }[];
    expect(logs.map((l) => l.conversation_title)).toEqual([cut]);
  });

  it('a fragment kept from a long file has a preview that shows it was cut', async () => {
    const file = `${t.dir}/notes.txt`;
    (await import('node:fs')).writeFileSync(file, `${'pelicans keep fish '.repeat(20)}\n`);
    expect((await t.run(['fragments', 'set', 'notes', file])).code).toBe(0);
    const [kept] = JSON.parse((await t.run(['fragments', 'list', '--json', 'preview'])).stdout) as { preview: string }[];
    expect(kept!.preview).toBe(`${'pelicans keep fish '.repeat(20).slice(0, 99).trimEnd()}…`);
  });
});
