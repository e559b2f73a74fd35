/**
 * `router batch create` killed with -9 after the service made the batch, before the id was
 * printed, then run again: the script gets that batch (spec: found in the listing), or a refusal
 * naming --new (deployed: nothing lists batches), never a second batch sent in silence.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchesOf, batchesPathOf, FLAVORS, newSpace, requestsFile, setFaults } from '../support/batch-jobs.js';
import { startTestEnv } from '../helpers.js';
import { killedNine } from '../support/run-process.js';
import { waitForState } from '../support/until.js';
import { startedForAll } from '../support/for-all.js';

describe.each(FLAVORS)('batch create killed before its id was printed (%s flavour)', (flavor) => {
  const t = startedForAll(() => startTestEnv({ batchDelayMs: 5, flavor }));

  const create = (file: string, ...more: string[]) => ['batch', 'create', file, '--model', 'local/echo', ...more];

  /** A create whose batch the service made, its answer held (until the CLI is killed, unless `alive`). */
  async function heldAfterMade(name: string, alive = false, more: Record<string, string> = {}) {
    const s = await newSpace(t, `create-${flavor}`);
    const file = requestsFile(t.dir, `${flavor}-${name}.jsonl`, 3, (i) => ({ messages: [{ role: 'user', content: `line ${i}` }], max_tokens: 10 }));
    // The create is carried out, its answer never sent: the CLI waits for it until killed.
    await setFaults(t, s, [`held,times=1,path=${batchesPathOf(flavor)},method=POST`]);
    const child = t.spawn(create(file), { ...s.env, ...more });
    let stdout = '';
    child.stdout!.on('data', (c) => (stdout += c));
    await waitForState(async () => (await batchesOf(t, s)).length === 1, 'the batch to be made');
    if (!alive) await killedNine(child);
    expect(stdout).toBe('');
    await setFaults(t, s, []);
    return { s, file, made: (await batchesOf(t, s))[0].id as string, child };
  }
  const killedAfterMade = (name: string) => heldAfterMade(name);

  it('run again: never a second batch unasked; a create that was answered and is run again makes a new one', async () => {
    const { s, file, made } = await killedAfterMade('again');
    const again = await t.run(create(file), { env: s.env });
    if (flavor === 'spec') {
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout.trim()).toBe(made);
      expect(again.stderr).toMatch(/never answered; found its batch in the listing/);
    } else {
      expect(again.code, again.stderr).toBe(8);
      expect(again.stdout).toBe('');
      expect(again.stderr.trim().split('\n')).toHaveLength(1);
      expect(again.stderr).toMatch(/lists no batches.*--new/);
      // Refused again until told.
      expect((await t.run(create(file), { env: s.env })).code).toBe(8);
    }
    expect(await batchesOf(t, s)).toHaveLength(1);
    if (flavor === 'deployed') {
      const sent = await t.run(create(file, '--new'), { env: s.env });
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stdout.trim()).not.toBe(made);
      expect(await batchesOf(t, s)).toHaveLength(2);
    }
    // Answered, its id printed: the same create run on purpose makes a batch of its own, as documented.
    const before = (await batchesOf(t, s)).length;
    const onPurpose = await t.run(create(file), { env: s.env });
    expect(onPurpose.code, onPurpose.stderr).toBe(0);
    expect(onPurpose.stderr).not.toMatch(/never answered/);
    expect(await batchesOf(t, s)).toHaveLength(before + 1);
  });

  it('create --watch --results killed mid-watch, the same command run again: it watches the batch made, never a second; results whole', async () => {
    const s = await newSpace(t, `watch-${flavor}`);
    const file = requestsFile(t.dir, `${flavor}-watch.jsonl`, 3, (i) => ({ messages: [{ role: 'user', content: `line ${i}` }], max_tokens: 10 }));
    const out = join(t.dir, `${flavor}-watch-results.jsonl`);
    const watching = [...create(file), '--watch', '--interval', '100ms', '--results', out];
    // The batch made and its id said; every look at it held (until the kill): the watch cannot end first.
    await setFaults(t, s, [`held,path=${batchesPathOf(flavor)}/,method=GET`]);
    const child = t.spawn(watching, s.env);
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    await waitForState(async () => /created batch_/.test(stderr) && (await batchesOf(t, s)).length === 1, 'the batch to be made and its id said');
    await killedNine(child);
    await setFaults(t, s, []);
    const made = (await batchesOf(t, s))[0].id as string;
    expect(existsSync(out)).toBe(false);

    // Before, the rerun made (and billed) a second batch: the first's id was said on stderr only.
    const again = await t.run(watching, { env: s.env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(new RegExp(`earlier create --watch of .* made ${made} .*not sent again; watching it`));
    expect(await batchesOf(t, s)).toHaveLength(1);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.custom_id).sort()).toEqual(['c1', 'c2', 'c3']);
    expect(lines.every((l) => l.error === null)).toBe(true);

    // Its watch saw it end: the same command once more is a create of its own, as documented.
    const third = await t.run(watching, { env: s.env });
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).not.toMatch(/earlier create/);
    expect(await batchesOf(t, s)).toHaveLength(2);
  });

  if (flavor === 'spec') {
    it('a batch seen by `batch get` before the rerun is still found as the unanswered create\'s (never a second)', async () => {
      const { s, file, made } = await killedAfterMade('seen-first');
      expect((await t.run(['batch', 'get', made], { env: s.env })).code).toBe(0);
      // Before: a batch in this machine's index was taken for one answered to its create, so the rerun sent (and billed) a second.
      const again = await t.run(create(file), { env: s.env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout.trim()).toBe(made);
      expect(await batchesOf(t, s)).toHaveLength(1);
    });
  }

  it('other options are another create: sent, and the unanswered one is still looked for', async () => {
    const { s, file, made } = await killedAfterMade('other');
    const other = await t.run(create(file, '--no-fallbacks'), { env: s.env });
    expect(other.code, other.stderr).toBe(0);
    expect(await batchesOf(t, s)).toHaveLength(2);
    const again = await t.run(create(file), { env: s.env });
    if (flavor === 'spec') expect(again.stdout.trim(), again.stderr).toBe(made);
    else expect(again.code, again.stderr).toBe(8);
    expect(await batchesOf(t, s)).toHaveLength(2);
  });

  it('two identical creates at once: the second waits for the first, then goes on as a rerun (never a second batch unasked)', async () => {
    const { s, file, made, child } = await heldAfterMade('twice', true);
    // --verbose: the wait is said on a terminal, or with it (as a budget's wait for calls under way).
    const second = t.spawn(['--verbose', ...create(file)], s.env);
    let [stdout, stderr] = ['', ''];
    second.stdout!.on('data', (c) => (stdout += c));
    second.stderr!.on('data', (c) => (stderr += c));
    const code = new Promise<number | null>((done) => second.on('close', (c) => done(c)));
    // Before, it did not wait: it read the first's record as one never answered (deployed: refused, exit 8).
    await waitForState(async () => /waiting for an identical create of .* under way \(process \d+\) to end/.test(stderr) || second.exitCode !== null, 'the second to wait');
    expect(stderr).toMatch(/waiting for an identical create/);
    expect(second.exitCode).toBeNull();
    await killedNine(child);
    if (flavor === 'spec') {
      expect(await code, stderr).toBe(0);
      expect(stdout.trim()).toBe(made);
    } else {
      expect(await code, stderr).toBe(8);
      expect(stderr).toMatch(/lists no batches.*--new/);
    }
    expect(await batchesOf(t, s)).toHaveLength(1);
  });

  it('a rerun that finds the batch made before sends nothing: no budget refuses it', async () => {
    const { s, file, made } = await killedAfterMade('budget');
    // A budget the batch's bound does not fit: before, checked ahead of the lookup, the rerun was refused (exit 4).
    const again = await t.run(create(file), { env: { ...s.env, ROUTER_DAILY_BUDGET: '0.0000001' } });
    if (flavor === 'spec') {
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout.trim()).toBe(made);
    } else expect(again.code, again.stderr).toBe(8);
    expect(await batchesOf(t, s)).toHaveLength(1);
  });

  it('a rerun under a budget that finds the batch made before holds its bound, as the create that made it would have', async () => {
    // The batch still runs when the rerun finds it (an ended one's cost is what `batch get` records: nothing to hold).
    await t.admin('batches', { delay_ms: 60_000 });
    const { s, file, made } = await killedAfterMade('held').finally(() => t.admin('batches', { delay_ms: 5 }));
    const again = await t.run(create(file), { env: { ...s.env, ROUTER_DAILY_BUDGET: '5' } });
    const holds = existsSync(join(s.state, 'budget-holds')) ? readdirSync(join(s.state, 'budget-holds')).filter((n) => n.startsWith('batch-')) : [];
    if (flavor === 'spec') {
      expect(again.code, again.stderr).toBe(0);
      // The killed create's hold was let go (a create's is, its batch being found by its rerun): without this one, the batch ran unheld.
      expect(holds).toEqual([`batch-${made}.json`]);
    } else {
      expect(again.code, again.stderr).toBe(8);
      expect(holds).toEqual([]);
    }
  });

  it('killed under a budget after the service made the batch: its bound stays held (deployed: no rerun can find it); a rerun that finds it holds it once', async () => {
    await t.admin('batches', { delay_ms: 60_000 });
    const budget = { ROUTER_DAILY_BUDGET: '5' };
    const { s, file, made } = await heldAfterMade('killed-held', false, budget).finally(() => t.admin('batches', { delay_ms: 5 }));
    const env = { ...s.env, ...budget };
    const spent = async () => (JSON.parse((await t.run(['usage', '--json'], { env })).stdout) as { budgets: { spent: number }[] }).budgets[0]!.spent;
    // Three lines of local/echo at the batch price; before, the killed create's hold counted nothing (spent 0).
    const bound = await spent();
    expect(bound).toBeGreaterThan(0);
    // A budgeted call sees the dead create: its hold is kept, not let go.
    expect((await t.run(['chat', '--model', 'local/echo', '--max-tokens', '1', 'hi'], { env })).code).toBe(0);
    const holds = () => readdirSync(join(s.state, 'budget-holds')).filter((n) => n.startsWith('batch-'));
    expect(holds()).toHaveLength(1);
    expect(await spent()).toBeGreaterThanOrEqual(bound);
    const again = await t.run(create(file), { env });
    expect(again.code, again.stderr).toBe(flavor === 'spec' ? 0 : 8);
    // Spec: the found batch's hold is the killed create's, once. Deployed: still the killed create's (its batch may run).
    expect(holds()).toEqual(flavor === 'spec' ? [`batch-${made}.json`] : [expect.stringMatching(/^batch-sent-/)]);
    expect(await spent()).toBeGreaterThanOrEqual(bound);
    expect(await spent()).toBeLessThan(bound * 2);
  });

  it('Ctrl-C under a budget after the upload was sent: the batch may exist, so its bound stays held; a rerun settles it', async () => {
    await t.admin('batches', { delay_ms: 60_000 });
    const budget = { ROUTER_DAILY_BUDGET: '5' };
    const { s, file, made, child } = await heldAfterMade('interrupted', true, budget).finally(() => t.admin('batches', { delay_ms: 5 }));
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    const ended = new Promise<string>((done) => child.on('close', (c, sig) => done(`${c ?? sig}`)));
    child.kill('SIGINT');
    // It dies of SIGINT after its clean-up (a shell loop stops).
    expect(await ended).toBe('SIGINT');
    expect(stderr).toMatch(/stopped after the upload was sent: the batch may exist/);
    const env = { ...s.env, ...budget };
    const holds = () => readdirSync(join(s.state, 'budget-holds')).filter((n) => n.startsWith('batch-'));
    // Before, the hold went with the process: the batch ran unheld (spent 0).
    expect(holds()).toEqual([expect.stringMatching(/^batch-sent-/)]);
    const usage = JSON.parse((await t.run(['usage', '--json'], { env })).stdout) as { budgets: { spent: number }[] };
    expect(usage.budgets[0]!.spent).toBeGreaterThan(0);
    const again = await t.run(create(file), { env });
    expect(again.code, again.stderr).toBe(flavor === 'spec' ? 0 : 8);
    expect(holds()).toEqual(flavor === 'spec' ? [`batch-${made}.json`] : [expect.stringMatching(/^batch-sent-/)]);
  });

  it('a record older than the 30 days a batch is kept is dropped when a create finishes; a younger one stays', async () => {
    const s = await newSpace(t, `create-${flavor}`);
    const creates = join(s.state, 'creates');
    mkdirSync(creates, { recursive: true });
    const old = new Date(Date.now() - 31 * 86_400_000);
    writeFileSync(join(creates, 'a'.repeat(32) + '.json'), JSON.stringify({ sent_at: old.toISOString(), after: 'unlisted', input: 'old.jsonl' }));
    writeFileSync(join(creates, 'b'.repeat(32) + '.json'), 'not json');
    utimesSync(join(creates, 'b'.repeat(32) + '.json'), old, old);
    writeFileSync(join(creates, 'c'.repeat(32) + '.json'), JSON.stringify({ sent_at: new Date(Date.now() - 29 * 86_400_000).toISOString(), after: 'unlisted', input: 'young.jsonl' }));
    const file = requestsFile(t.dir, `${flavor}-prune.jsonl`, 2, (i) => ({ messages: [{ role: 'user', content: `line ${i}` }] }));
    const r = await t.run(create(file), { env: s.env });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(creates).filter((n) => n.endsWith('.json'))).toEqual(['c'.repeat(32) + '.json']);
    expect(existsSync(join(creates, 'a'.repeat(32) + '.json'))).toBe(false);
  });
});
