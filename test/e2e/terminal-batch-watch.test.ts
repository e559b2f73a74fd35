/** Keys on a real terminal (tmux) while `router batch create/get/run` watch: Ctrl-C, Ctrl-Z and fg, NO_COLOR, Ctrl-C before a create's answer. */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type TestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';
import { emulatorWithTerminal, reopened, ROUTER as router } from '../support/terminal-file.js';

// Keys pressed on a real terminal (tmux), not signals sent to the process.
let t: TestEnv;
let term: Terminal;
const fresh = () => (term = reopened(term, t));

/**
 * Runs `fn` with the emulator's batch items held back (each waits 10 min): a batch that must still run when Ctrl-C comes
 * does, however long a loaded machine takes to start the watch (40 items of 300 ms can be done before it). The items
 * held stay so; later batches go at the usual pace.
 */
async function held<T>(fn: () => Promise<T>): Promise<T> {
  await t.admin('batches', { delay_ms: 600_000 });
  try {
    return await fn();
  } finally {
    await t.admin('batches', { delay_ms: 300 });
  }
}

emulatorWithTerminal({ batchDelayMs: 300 }, (started) => (t = started), () => term);

const lines = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ custom_id: `r${i}`, body: { model: 'local/echo', messages: [{ role: 'user', content: `m${i}` }] } })).join('\n');

/** Starts `batch create FILE --watch` (after `prefix`, such as env) on the terminal; the batch's id once its watch shows it. */
async function watchStarted(file: string, prefix = ''): Promise<string> {
  term.run(`${prefix}${router} batch create ${file} --watch --interval 0.1`);
  const id = /created (batch_\w+)/.exec(await term.waitFor(/created (batch_\w+)/))![1]!;
  await term.waitFor(new RegExp(`${id} (validating|in_progress)`));
  return id;
}

describe.skipIf(!HAS_TMUX)('Ctrl-C on a terminal', () => {
  it('stops batch get --watch at once, prints the id and the exact resume command, exit 130', () => held(async () => {
    const file = join(t.dir, 'slow.jsonl');
    writeFileSync(file, lines(40));
    const created = await t.run(['batch', 'create', file]);
    const id = created.stdout.trim();
    const out = join(t.dir, 'watch-out.jsonl');
    fresh();
    term.run(`${router} batch get ${id} --watch --interval 0.1 --results ${out}`);
    await term.waitFor(new RegExp(`${id} (validating|in_progress)`));
    term.keys('C-c');
    // No bound on the time it takes, which a loaded machine passes: a watch that Ctrl-C does not stop never prints this at all.
    const screen = await term.waitFor(/Resume with: .*\n?.*--results/);
    expect(screen).toContain(`Resume with: router batch get ${id} --watch --interval 0.1 --results ${out}`);
    expect(await term.lastExit()).toBe(130);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(t.dir).filter((n) => n.startsWith('.router-tmp-'))).toEqual([]);
  }));

  it('stops batch create --watch the same way; the new id was printed first', () => held(async () => {
    const file = join(t.dir, 'slow2.jsonl');
    writeFileSync(file, lines(40));
    fresh();
    const id = await watchStarted(file);
    term.keys('C-c');
    await term.waitFor(new RegExp(`Resume with: router batch get ${id} --watch --interval 0.1`));
    expect(await term.lastExit()).toBe(130);
  }));
});

describe.skipIf(!HAS_TMUX)('Ctrl-Z on a terminal', () => {
  it('stops the watch\'s spinner, so the shell has its cursor back; fg spins it again', () => held(async () => {
    const file = join(t.dir, 'stopped.jsonl');
    writeFileSync(file, lines(3));
    fresh();
    const id = await watchStarted(file);
    expect(await term.cursorVisible()).toBe(false);
    term.keys('C-z');
    await term.waitFor(/Stopped.*\n\$\s*$/);
    expect(await term.cursorVisible()).toBe(true);
    term.run('fg');
    await term.waitFor(new RegExp(`\\$ fg\\n.*\\n.*${id} (validating|in_progress)`));
    expect(await term.cursorVisible()).toBe(false);
    term.keys('C-c');
    await term.waitFor(/Resume with: /);
    expect(await term.lastExit()).toBe(130);
    expect(await term.cursorVisible()).toBe(true);
  }));
});

describe.skipIf(!HAS_TMUX)('NO_COLOR on a terminal', () => {
  it('the watch\'s spinner is drawn without color', () => held(async () => {
    const file = join(t.dir, 'uncolored.jsonl');
    writeFileSync(file, lines(3));
    term?.close();
    term = new Terminal({ ...t.env, ROUTER_MANAGEMENT_KEY: t.managementKey, NO_COLOR: '1' });
    // Without CI in the environment, where chalk (ora's) would paint nothing anyway.
    await watchStarted(file, 'env -u CI -u FORCE_COLOR ');
    expect(await term.screen(true)).not.toMatch(/\x1b\[3\dm/);
    term.keys('C-c');
    expect(await term.lastExit()).toBe(130);
  }));
});

describe.skipIf(!HAS_TMUX)('Ctrl-C while a create waits for its answer', () => {
  it('says the batch may exist and how to check (exit 130): the upload was sent', async () => {
    const file = join(t.dir, 'waiting.jsonl');
    writeFileSync(file, lines(3));
    // Held a minute, not seconds that a loaded machine can spend before the key arrives (the create would then be done).
    await t.admin('faults', { faults: ['slow,delay_ms=60000,times=1,path=/v1/batches,method=POST'] });
    // The emulator's own requests: its log has one once the head is read, before the body is.
    const creates: IncomingMessage[] = [];
    const seen = (req: IncomingMessage) => req.method === 'POST' && req.url === '/api/v1/batches' && creates.push(req);
    t.emu.server.on('request', seen);
    fresh();
    term.run(`${router} batch create ${file}`);
    // The upload is sent, to its end (read by the server's parser; the route, held by the fault, reads it later): the key
    // comes while the create waits for its answer, not after a time that may end with the body still on its way.
    try {
      expect(await until(() => creates.some((r) => r.complete))).toBe(true);
    } finally {
      t.emu.server.off('request', seen);
    }
    term.keys('C-c');
    const screen = await term.waitFor(/stopped after the upload was sent: the batch may exist\. Check with: router batch list( --created-after \d+)?\n(.*\n)?error: interrupted/);
    expect(screen).not.toMatch(/at .+\.js:\d+/);
    expect(await term.lastExit()).toBe(130);
    await t.admin('faults', { faults: [] });
  });
});

describe.skipIf(!HAS_TMUX)('batch run on a terminal', () => {
  it('one progress line for the whole job; Ctrl-C stops watching (exit 130), the resume command finishes it', async () => {
    const file = join(t.dir, 'job.jsonl');
    writeFileSync(file, lines(30));
    const out = join(t.dir, 'job-out.jsonl');
    fresh();
    term.run(`${router} batch run ${file} --max-requests 10 --watch --interval 0.1 --results ${out}`);
    const progress = await term.waitFor(/job_\w+: shards \d\/3 · requests \d+ completed, 0 failed of 30 · \$[\d.]+ · \d+s/);
    const id = /(job_\w+): shards/.exec(progress)![1]!;
    // The job must still run when the key comes: items not yet started wait 20 s (a loaded machine can take seconds
    // to deliver it; 30 items of 300 ms were all done before it). Back to no wait for the resume, which finishes what
    // was held within those 20 s.
    await t.admin('batches', { delay_ms: 20_000 });
    term.keys('C-c');
    const screen = await term.waitFor(/Resume with: .*\n?.*--results/);
    expect(screen.replace(/\n/g, '')).toContain(`Resume with: router batch run --resume ${id} --watch --interval 0.1 --results ${out}`);
    expect(await term.lastExit()).toBe(130);
    expect(existsSync(out)).toBe(false);
    await t.admin('batches', { delay_ms: 0 });
    const resumed = await t.run(['batch', 'run', '--resume', id, '--watch', '--interval', '0.1', '--results', out]);
    expect(resumed.code, resumed.stderr).toBe(0);
  });
});