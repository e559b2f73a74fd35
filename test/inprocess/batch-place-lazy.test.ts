import { describe, expect, it } from 'vitest';
import { APIError, RouterClient } from '../../src/client/index.js';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// The batches place is a file read (batch-places.json): a run that asks nothing of batches, as a
// one-shot chat, must not pay for it at start-up.
const t = startedForAll(() => startCliEnv());

describe('the batches place of a client', () => {
  it('is read at the first batch call, once, and not by a chat', async () => {
    let reads = 0;
    const client = new RouterClient({
      apiKey: t.apiKey,
      apiRoot: t.apiRoot,
      batches: {
        get place() {
          reads++;
          return { path: '/beta/batches' };
        },
        fixed: true,
      },
    });
    try {
      const answer = await client.chat.create({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] });
      expect(answer.choices[0]?.message.content).toBe('hi');
      expect(reads).toBe(0);
      t.clearRequests();
      const err = await client.batches.get('batch_none').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      // Asked where the place said, the one place of a fixed one.
      expect(t.requests().map((r) => `${r.method} ${r.path}`)).toEqual(['GET /beta/batches/batch_none']);
      expect(client.batches.url('b')).toBe(`${t.apiRoot}/beta/batches/b`);
      expect(reads).toBe(1);
    } finally {
      await client.close();
    }
  });
});
