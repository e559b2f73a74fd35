/**
 * `router batch run` exactly once when it cannot tell batches apart by their shape: a lost create
 * beside batches of the same shape, a clock that differs from the service's, many runs of one
 * file at once, the same file under other names, stale locks taken over at once.
 */
import { describe, expect, it } from 'vitest';
import { newSpace, requestsFile } from '../support/batch-jobs.js';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startTestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startTestEnv({ batchDelayMs: 5 }));

const space = () => newSpace(t, 'once');
/** Lines c1..cN whose prompts say `word i`: two files of one shape, with other prompts. */
const input = (name: string, count: number, word: string, extra: (i: number) => object = () => ({})) => requestsFile(t.dir, name, count, (i) => ({ messages: [{ role: 'user', content: `${word} ${i}` }], ...extra(i) }));

describe('locks and leftovers', () => {
  const lockModule = resolve(__dirname, '..', '..', 'dist', 'internal', 'file-lock.js');
  /**
   * `count` processes that, round after round, each try to take that round's lock at the same
   * instant (to the microsecond, as their clocks go); how many got it in each round. What they
   * got is held until every round is over.
   */
  async function race(base: string, rounds: number, count: number): Promise<number[]> {
    const at = Date.now() + 800;
    const script = `import { takeLock } from ${JSON.stringify(lockModule)};
const now = () => performance.timeOrigin + performance.now();
// Asleep until 2 ms before the instant, then spinning to it: as exact as spinning all along, at a tenth of the CPU.
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const until = (instant) => {
  if (instant - now() > 2) Atomics.wait(sleeper, 0, 0, instant - now() - 2);
  while (now() < instant);
};
const won = [];
for (let r = 0; r < ${rounds}; r++) {
  until(${at} + r * 20);
  won.push('release' in takeLock(${JSON.stringify(base)} + '-' + r) ? 1 : 0);
}
process.stdout.write(won.join(','));
process.stdin.resume();`;
    const children = Array.from({ length: count }, () => spawn(process.execPath, ['--input-type=module', '-e', script]));
    const outs = await Promise.all(children.map((child) => new Promise<number[]>((done) => {
      let text = '';
      child.stdout.on('data', (c) => {
        text += c;
        if (text.split(',').length === rounds) done(text.split(',').map(Number));
      });
      child.on('close', () => done(text.split(',').map(Number)));
    })));
    for (const child of children) child.stdin.end();
    await Promise.all(children.map((child) => new Promise((done) => (child.exitCode !== null ? done(null) : child.on('close', done)))));
    return Array.from({ length: rounds }, (_, r) => outs.reduce((sum, won) => sum + (won[r] ?? 0), 0));
  }

  it("four processes taking over a dead process's lock at once: exactly one gets it, every time", async () => {
    const dir = join(t.dir, 'locks');
    mkdirSync(dir, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const rounds = 100;
    for (let r = 0; r < rounds; r++) symlinkSync(String(dead), join(dir, `run.lock-${r}`));
    const winners = await race(join(dir, 'run.lock'), rounds, 4);
    if (process.env.ROUTER_TEST_COUNTS) console.log(`takeover: ${rounds} rounds, ${winners.filter((w) => w !== 1).length} without exactly one winner`);
    expect(winners).toEqual(winners.map(() => 1));
  });

  it('a lock whose holder is a zombie (exited, not reaped) is taken over', async () => {
    const s = await space();
    const file = input('zombie.jsonl', 2, 'zombie');
    const planned = await t.run(['batch', 'run', file, '--model', 'local/echo'], { env: s.env });
    const id = planned.stdout.trim();
    // sh starts a short child, then becomes a sleep that never reaps it: the child stays a zombie.
    // A minute, not seconds that a loaded machine can pass before the resume below takes the lock over (killed after).
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 60']);
    const zombie = await new Promise<number>((done) => parent.stdout.once('data', (c) => done(Number(String(c).trim()))));
    try {
      // A zombie once its 0.1 s are over, however late that is on a loaded machine.
      const isZombie = () => /\) Z /.test(readFileSync(`/proc/${zombie}/stat`, 'latin1'));
      expect(await until(isZombie)).toBe(true);
      symlinkSync(String(zombie), join(s.state, 'jobs', id, 'run.lock'));
      const r = await t.run(['batch', 'run', '--resume', id, '--watch', '--interval', '0.05'], { env: s.env });
      expect(r.code, r.stderr).toBe(0);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it("temp files of killed runs' records are removed when the job is next run", async () => {
    const s = await space();
    const file = input('leftover.jsonl', 2, 'leftover');
    const id = (await t.run(['batch', 'run', file, '--model', 'local/echo'], { env: s.env })).stdout.trim();
    const folder = join(s.state, 'jobs', id);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(folder, `.job.json.${dead}`), '{"half');
    const r = await t.run(['batch', 'run', '--resume', id, '--watch', '--interval', '0.05'], { env: s.env });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(folder).sort()).toEqual(['job.json']);
  });
});
