/**
 * `router batch create` killed with -9 after the service made the batch, before the id was
 * printed, then run again: the script gets that batch (spec: found in the listing), or a refusal
 * naming --new (deployed: nothing lists batches), never a second batch sent in silence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchesOf, batchesPathOf, FLAVORS, newSpace, requestsFile, setFaults } from '../support/batch-jobs.js';
import { startTestEnv, type TestEnv } from '../helpers.js';

/** Waits for a state; the bound only ends a wait for one that never comes (generous: a loaded machine takes seconds). */
async function waitFor(check: () => Promise<boolean>, what: string, ms = 45_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.each(FLAVORS)('batch create killed before its id was printed (%s flavour)', (flavor) => {
  let t: TestEnv;
  beforeAll(async () => {
    t = await startTestEnv({ batchDelayMs: 5, flavor });
  });
  afterAll(() => t.close());

  const create = (file: string, ...more: string[]) => ['batch', 'create', file, '--model', 'local/echo', ...more];

  /** A create whose batch the service made, its answer held until the CLI was killed. */
  async function killedAfterMade(name: string) {
    const s = await newSpace(t, `create-${flavor}`);
    const file = requestsFile(t.dir, `${flavor}-${name}.jsonl`, 3, (i) => ({ messages: [{ role: 'user', content: `line ${i}` }] }));
    // The create is carried out, its answer never sent: the CLI waits for it until killed.
    await setFaults(t, s, [`held,times=1,path=${batchesPathOf(flavor)},method=POST`]);
    const child = t.spawn(create(file), s.env);
    let stdout = '';
    child.stdout!.on('data', (c) => (stdout += c));
    await waitFor(async () => (await batchesOf(t, s)).length === 1, 'the batch to be made');
    await new Promise<void>((done) => {
      if (child.exitCode !== null) return done();
      child.on('exit', () => done());
      child.kill('SIGKILL');
    });
    expect(stdout).toBe('');
    await setFaults(t, s, []);
    return { s, file, made: (await batchesOf(t, s))[0].id as string };
  }

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
});
