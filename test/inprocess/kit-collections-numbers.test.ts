import { expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { type RouterClient, ValidationError } from '../../src/client/index.js';
import { kitPerTest } from '../support/inprocess-env.js';
import { Collections, embedInto, planEmbeds, runPlan, similarTo, similarToId } from '../../src/kit/index.js';

// embedInto's and runPlan's batchSize and concurrency, from JavaScript: checked before anything is sent or kept.
let emu: Emulator;
let stateDir: string;
let client: RouterClient;

kitPerTest('router-kit-coll-numbers-', (f) => ({ emu, stateDir, client } = f));

const embeddings = () => emu.requestLog.filter((r) => r.path.endsWith('/embeddings')).length;
const items = [{ id: 'a', content: 'first item' }, { id: 'b', content: 'second item' }];
const open = () => new Collections({ env: { ROUTER_STATE_DIR: stateDir }, profile: 'app' }).open('docs');

it('a concurrency of 0 or a batchSize that is no number is a ValidationError, not "0 embedded" with nothing sent', async () => {
  const before = embeddings();
  for (const opts of [{ concurrency: 0 }, { batchSize: Number.NaN }, { concurrency: 1.5 }]) {
    // Was { embedded: 0, unchanged: 0 }: no request, no error, the items not kept.
    const err = await embedInto(open(), items, { client, model: 'local/embed', ...opts }).then((r) => r, (e: unknown) => e);
    expect(err, JSON.stringify(opts)).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(new RegExp(`^embedInto\\(\\) ${Object.keys(opts)[0]} must be a whole number of at least 1, not `));
  }
  expect(embeddings()).toBe(before);
  expect(await embedInto(open(), items, { client, model: 'local/embed', batchSize: 1, concurrency: 1 })).toEqual({ embedded: 2, unchanged: 0 });
});

it('a batchSize of 0 or below is refused too (it made no batches ever: a loop that never ended)', async () => {
  const c = open();
  const plan = planEmbeds(c, items, { model: 'local/embed' });
  const before = embeddings();
  for (const batchSize of [0, -1]) await expect(runPlan(c, plan, { client, batchSize })).rejects.toThrow(/^runPlan\(\) batchSize must be a whole number of at least 1, not -?\d$/);
  expect(embeddings()).toBe(before);
});

it("similarTo's and similarToId's number is a whole number of at least 1", async () => {
  const c = open();
  await embedInto(c, [...items, { id: 'c', content: 'third item' }], { client, model: 'local/embed' });
  // Was taken: -1 gave every entry but the last, 0 and NaN none.
  for (const number of [0, -1, Number.NaN, 1.5]) {
    expect(() => similarToId(c, 'a', { number }), String(number)).toThrow(/^similarToId\(\) number must be a whole number of at least 1, not /);
    expect(() => similarTo(c, new Array<number>(256).fill(1), { number }), String(number)).toThrow(ValidationError);
  }
  expect(similarToId(c, 'a', { number: 1 })).toHaveLength(1);
});
