import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { RouterClient } from '../../src/client/index.js';
import { kitPerTest } from '../support/inprocess-env.js';
import { Collections, CostCapExceeded, embedInto, serviceListPrices, similarTo, SpendGuard, type BudgetSettings } from '../../src/kit/index.js';

// Collections as a program uses them (router-cli/kit), over real HTTP to the emulator.
let emu: Emulator;
let stateDir: string;
let client: RouterClient;

kitPerTest('router-kit-coll-', (f) => ({ emu, stateDir, client } = f));

const embeddings = () => emu.requestLog.filter((r) => r.path.endsWith('/embeddings'));
const ledger = () => (existsSync(join(stateDir, 'usage.jsonl')) ? readFileSync(join(stateDir, 'usage.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : []);
const items = (count: number) => Array.from({ length: count }, (_, i) => ({ id: `k${i}`, content: `text ${i}` }));

it('embedInto keeps every item once, at most `concurrency` requests under way; again, it sends nothing', async () => {
  const c = new Collections({ env: { ROUTER_STATE_DIR: stateDir }, profile: 'app' }).open('docs');
  let now = 0;
  let most = 0;
  const before = embeddings().length;
  const answered = await embedInto(c, items(10), {
    // The real client, its requests counted as each leaves and its answer comes.
    client: {
      embeddings: {
        create: async (...args: Parameters<RouterClient['embeddings']['create']>) => {
          most = Math.max(most, ++now);
          try {
            return await client.embeddings.create(...args);
          } finally {
            now--;
          }
        },
      },
    } as unknown as RouterClient,
    model: 'local/embed',
    batchSize: 2,
    concurrency: 3,
  });
  expect(answered).toEqual({ embedded: 10, unchanged: 0 });
  expect(embeddings().length - before).toBe(5);
  expect(most).toBe(3);
  expect(c.entries().entries.size).toBe(10);
  expect(await embedInto(c, items(10), { client })).toEqual({ embedded: 0, unchanged: 10 });
  expect(embeddings().length - before).toBe(5);
  const [first] = c.entries().entries.values();
  const vectors = c.vectors();
  const meta = c.meta()!;
  expect(similarTo(c, vectors.subarray(first!.row * meta.length, (first!.row + 1) * meta.length), { number: 1 })[0]!.id).toBe(first!.id);
});

it('under a SpendGuard: a cap the whole run would pass is refused before anything is sent; each answer recorded', async () => {
  const c = new Collections({ env: { ROUTER_STATE_DIR: stateDir } }).open('spend');
  const before = embeddings().length;
  const capped = new SpendGuard({ prices: serviceListPrices(client), env: { ROUTER_STATE_DIR: stateDir }, maxCost: 0.00000001 });
  await expect(embedInto(c, items(6), { client, model: 'local/embed', guard: capped })).rejects.toBeInstanceOf(CostCapExceeded);
  expect(embeddings().length).toBe(before);
  const budgets: BudgetSettings = { profile: 'app', dailyBudget: '1', from: { dailyBudget: { kind: 'env', name: 'ROUTER_DAILY_BUDGET' } } };
  const guard = new SpendGuard({ prices: serviceListPrices(client), env: { ROUTER_STATE_DIR: stateDir }, budgets });
  expect(await embedInto(c, items(6), { client, model: 'local/embed', guard, command: 'my-app', batchSize: 4 })).toEqual({ embedded: 6, unchanged: 0 });
  guard.release();
  expect(ledger().map((r) => [r.command, r.endpoint])).toEqual([['my-app', '/v1/embeddings'], ['my-app', '/v1/embeddings']]);
  // A run the guard refuses changes nothing kept, not even the metadata of texts it would not send again.
  const again = [{ id: 'k0', content: 'text 0', metadata: { new: true } }, ...items(12).slice(6)];
  await expect(embedInto(c, again, { client, guard: new SpendGuard({ prices: serviceListPrices(client), env: { ROUTER_STATE_DIR: stateDir }, maxCost: 0.00000001 }) })).rejects.toBeInstanceOf(CostCapExceeded);
  expect(c.entries().entries.get('k0')!.metadata).toBeUndefined();
  expect(c.entries().entries.size).toBe(6);
});
