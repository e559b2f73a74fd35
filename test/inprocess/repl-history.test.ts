import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { testStreams } from '../support/inprocess.js';
import { until } from '../support/until.js';

// repl-history keeps the lines of every session: 8 `chat -i` at once × 20 lines kept 21 of 160 (the
// last to exit overwrote the file). Lines are appended under the file's lock, and the file stays bounded.
const home = mkdtempSync(join(tmpdir(), 'router-repl-history-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const state = join(home, 'state');
const env = { ROUTER_STATE_DIR: state, ROUTER_CONFIG_DIR: join(home, 'config'), ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_API_ROOT: 'http://127.0.0.1:9/api', ROUTER_PROFILE: '', ROUTER_MODEL: 'x/y', NO_COLOR: '1' };

/** One `chat -i` session that types `lines` (slash commands it does not know: nothing is sent), then /exit. */
async function session(lines: string[]): Promise<number> {
  const t = testStreams({ env, tty: { stdin: true, stdout: true, stderr: true } });
  const keys = new PassThrough();
  t.streams.stdin = keys;
  const run = main(['node', 'router', 'chat', '-i'], t.streams);
  const prompts = () => (t.stderr().match(/> /g) ?? []).length;
  for (const [i, line] of lines.entries()) {
    await until(() => prompts() > i);
    keys.write(`${line}\n`);
  }
  await until(() => prompts() > lines.length);
  keys.write('/exit\n');
  return run;
}

/** The lines kept, but each session's `/exit`. */
const saved = () => readFileSync(join(state, 'repl-history'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string).filter((l) => l !== '/exit');

describe('repl-history', () => {
  it('8 sessions at once × 20 lines: all 160 kept, each session in its order', async () => {
    const sessions = Array.from({ length: 8 }, (_, s) => Array.from({ length: 20 }, (_, i) => `/no-such-${s}-${i}`));
    await Promise.all(sessions.map(session));
    const kept = saved();
    expect(kept).toHaveLength(160);
    for (const lines of sessions) expect(kept.filter((l) => lines.includes(l))).toEqual(lines);
  });

  it('a later session sees them, and adds its own after them', async () => {
    await session(['/later-one']);
    const kept = saved();
    expect(kept).toHaveLength(161);
    expect(kept.at(-1)).toBe('/later-one');
  });

  it('stays bounded: past 256 KiB it is cut back to its last 1,000 lines', async () => {
    writeFileSync(join(state, 'repl-history'), Array.from({ length: 2000 }, (_, i) => `${JSON.stringify(`/old-${i}-${'x'.repeat(200)}`)}\n`).join(''));
    await session(['/bounded']);
    const kept = readFileSync(join(state, 'repl-history'), 'utf8').trim().split('\n');
    // Cut to 1,000 as /bounded was added, then /exit appended.
    expect(kept).toHaveLength(1001);
    expect(kept.slice(-2).map((l) => JSON.parse(l))).toEqual(['/bounded', '/exit']);
  });
});
