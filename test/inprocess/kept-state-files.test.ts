/** State files router keeps, found damaged or unreadable: said on stderr once, never taken as empty in silence, never written over. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { FLAVORS } from '../support/batch-jobs.js';
import { hearingKeptProblems } from '../../src/internal/kept-state.js';

let t: CliEnv;
const line = (id: string) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: id }] } });

describe.each(FLAVORS)('%s flavour', (flavor) => {
  beforeAll(async () => {
    t = await startCliEnv({ flavor });
  });
  afterAll(() => t.close());

  it('a damaged batch-places.json is said and kept as it is, not taken as empty and written over', async () => {
    const state = join(t.dir, `places-${flavor}`);
    mkdirSync(state, { recursive: true });
    const places = join(state, 'batch-places.json');
    writeFileSync(places, '{"http://x": ');
    const f = join(t.dir, 'places.jsonl');
    writeFileSync(f, `${line('a')}\n`);
    const r = await t.run(['batch', 'create', f, '--model', 'local/echo'], { env: { ROUTER_STATE_DIR: state } });
    expect(r.code, r.stderr).toBe(0);
    // Was: nothing said, and the file replaced by the place found out.
    expect(r.stderr).toContain(`warning: ${places}: is damaged (not a JSON object); where batches live is found out again, and it is kept as it is (move it away to have it remembered again)\n`);
    expect(r.stderr.split(places).length - 1).toBe(1);
    expect(readFileSync(places, 'utf8')).toBe('{"http://x": ');
  });

  // The spec's service lists batches itself; the deployed one has no listing, so batch list reads the index.
  it.runIf(flavor === 'deployed')('a damaged line of the batch index is said by number; the lines after it are read', async () => {
    const state = join(t.dir, `index-${flavor}`);
    const f = join(t.dir, 'index.jsonl');
    writeFileSync(f, `${line('a')}\n`);
    const made = await t.run(['batch', 'create', f, '--model', 'local/echo'], { env: { ROUTER_STATE_DIR: state } });
    expect(made.code, made.stderr).toBe(0);
    const index = join(state, 'batches.jsonl');
    const kept = readFileSync(index, 'utf8');
    writeFileSync(index, `{"id": "torn\n${kept}`);
    const r = await t.run(['batch', 'list', '--json'], { env: { ROUTER_STATE_DIR: state } });
    expect(r.code, r.stderr).toBe(0);
    // Was: the torn line left out without a word.
    expect(r.stderr).toContain(`warning: ${index}: line 1 damaged and left out (the other lines are read; fix them or delete them)\n`);
  });

  it('a job record that cannot be read is named as such, not "no job"', async () => {
    const state = join(t.dir, `job-${flavor}`);
    const id = 'job_20261202_0000beef';
    mkdirSync(join(state, 'jobs', id, 'job.json'), { recursive: true });
    const r = await t.run(['batch', 'job', id], { env: { ROUTER_STATE_DIR: state } });
    // Was: "no job job_…" (exit 5): a record in the way of reading was taken as none.
    expect(r.stderr).toContain(`the record of ${id} ${join(state, 'jobs', id, 'job.json')}: is a folder: move it away; nothing of the job is sent or written until it can be read\n`);
    expect(r.code).not.toBe(0);
  });
});

// A damaged create record stops its create: batch-damaged-records.test.ts.

describe('kept files of chat: said, not taken as empty in silence', () => {
  beforeAll(async () => {
    t = await startCliEnv();
  });
  afterAll(() => t.close());

  it('a fragment alias file with no hash in it, and the REPL history with damaged lines', async () => {
    const state = join(t.dir, 'chat-state');
    mkdirSync(join(state, 'fragments', 'aliases'), { recursive: true });
    const alias = join(state, 'fragments', 'aliases', 'notes');
    writeFileSync(alias, 'not a hash\n');
    const r = await t.run(['chat', '-f', 'notes', 'hi', '--model', 'local/echo'], { env: { ROUTER_STATE_DIR: state } });
    // Was: only "no fragment" words, nothing of the damaged file.
    expect(r.stderr).toContain(`warning: ${alias}: is damaged (no fragment hash): alias notes is taken as none (router fragments set notes FRAGMENT names one again)\n`);
    writeFileSync(join(state, 'repl-history'), '"one"\n{"torn\n"two"\n');
    const { loadHistory } = await import('../../src/cli/commands/chat/repl-more.js');
    const said: string[] = [];
    hearingKeptProblems((l) => said.push(l), () => expect(loadHistory({ ROUTER_STATE_DIR: state })).toEqual(['two', 'one']));
    expect(said).toEqual([`warning: ${join(state, 'repl-history')}: 1 damaged line left out (the others are read; fix them or delete them)`]);
  });

  it('a LAST that names no conversation is said; the most recent is taken', async () => {
    const dir = join(t.dir, 'last-conversations');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'LAST'), 'not an id!\n');
    const { ConversationStore } = await import('../../src/kit/conversation-store.js');
    const said: string[] = [];
    hearingKeptProblems((l) => said.push(l), () => expect(new ConversationStore({ dir }).last()).toBeNull());
    // Was: unsaid.
    expect(said).toEqual([`warning: ${join(dir, 'LAST')}: is damaged (no conversation id): the most recent conversation is taken as the last`]);
  });
});
