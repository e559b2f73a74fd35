/**
 * `router logs` heads each turn by the time it was kept, as llm keeps each response's datetime_utc, and --json gives
 * it; turns an older router kept (no time of their own) say only what is known. Was: every turn of a conversation
 * dated by the conversation's last update (three turns a minute apart all shown at the third's time).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv());

let n = 0;
function user() {
  const dir = join(t.dir, `u${++n}`);
  mkdirSync(dir);
  const env = { ROUTER_STATE_DIR: join(dir, 'state') };
  return { env, folder: join(dir, 'state', 'conversations'), run: (args: string[]) => t.run(args, { env }) };
}
const ok = async (u: ReturnType<typeof user>, args: string[]) => {
  const r = await u.run(args);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
};
type Logged = { id: string; updated_at: string; datetime_utc: string | null };

it('each turn keeps the time it was kept: shown in its heading and as datetime_utc in --json', async () => {
  const u = user();
  await ok(u, ['chat', '--model', 'local/echo', '--conversation', 'pets', 'first']);
  await ok(u, ['chat', '-c', 'second']);
  await ok(u, ['chat', '--conversation', 'pets', 'third']);
  const turns = JSON.parse(await ok(u, ['logs', '--json'])) as Logged[];
  expect(turns.map((e) => e.id)).toEqual(['pets#1', 'pets#2', 'pets#3']);
  const times = turns.map((e) => e.datetime_utc!);
  for (const time of times) expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  // Each later than the one before; the last kept when the conversation was last updated, the others before.
  expect(times.map((x) => Date.parse(x))).toEqual([...times.map((x) => Date.parse(x))].sort((a, b) => a - b));
  expect(new Set(times).size).toBe(3);
  expect(times[2]).toBe(turns[2]!.updated_at);
  expect(Date.parse(times[0]!)).toBeLessThan(Date.parse(turns[0]!.updated_at));
  const shown = await ok(u, ['logs']);
  for (const [i, time] of times.entries()) expect(shown).toContain(`# ${time}    id: pets#${i + 1}\n`);
  expect(JSON.parse(await ok(u, ['logs', '--json', 'id,datetime_utc']))).toEqual(turns.map((e) => ({ id: e.id, datetime_utc: e.datetime_utc })));
});

it('a conversation an older router kept: its last turn at its last update, the others "by" it, null in --json', async () => {
  const u = user();
  mkdirSync(u.folder, { recursive: true });
  const at = '2026-01-02T03:04:05.678Z';
  const said = (content: string) => [{ role: 'user', content }, { role: 'assistant', content }];
  writeFileSync(join(u.folder, 'old.json'), JSON.stringify({ id: 'old', title: 'one', model: 'local/echo', created_at: '2026-01-01T00:00:00.000Z', updated_at: at, messages: [...said('one'), ...said('two')] }));
  const turns = JSON.parse(await ok(u, ['logs', '--json'])) as Logged[];
  expect(turns.map((e) => [e.id, e.datetime_utc])).toEqual([['old#1', null], ['old#2', at]]);
  const shown = await ok(u, ['logs']);
  expect(shown).toContain(`# by ${at}    id: old#1\n`);
  expect(shown).toContain(`# ${at}    id: old#2\n`);
  // A turn added to it keeps what is known of the older ones.
  await ok(u, ['chat', '--conversation', 'old', 'three']);
  const kept = JSON.parse(readFileSync(join(u.folder, 'old.json'), 'utf8')) as { updated_at: string; turn_times: (string | null)[] };
  expect(kept.turn_times).toEqual([null, at, kept.updated_at]);
  expect((JSON.parse(await ok(u, ['logs', '--json'])) as Logged[]).map((e) => e.datetime_utc)).toEqual([null, at, kept.updated_at]);
});
