import { describe, expect, it } from 'vitest';
import { hostileGateway } from '../support/hostile-gateway.js';
import { FLAVORS, batchesPathOf } from '../support/batch-jobs.js';

// A batch's requests run through the gateway's upstreams: a provider key (the gateway's own, from api_key_env)
// an upstream splits between two strings of its answer (its start ending the answer's id, its rest starting
// the content) never reaches the batch's results, as the caller reads them (the bytes, not parsed), in either
// flavour of the batch resource.
const KEY = 'sk-proj-ab3_Xy9-Qw_0123456789abcdefGHIJKLmnopqrstuvWXYZ';
const SECRET = KEY.slice('sk-proj-'.length);
const piecesIn = (text: string) => Array.from({ length: SECRET.length - 7 }, (_, i) => SECRET.slice(i, i + 8)).filter((piece) => text.includes(piece));
const answer = (id: string, content: string) => JSON.stringify({ id, object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

for (const flavor of FLAVORS) {
  describe(`a batch's results (${flavor})`, () => {
    const { willAnswer, settledBatchText } = hostileGateway(KEY, { batchDelayMs: 0, flavor });
    const path = batchesPathOf(flavor);

    it("a key split between the answer's id and its content", async () => {
      for (const at of [3, 8, 13]) {
        willAnswer({ body: answer(`chatcmpl-${KEY.slice(0, at)}`, `${KEY.slice(at)} said`) });
        const text = await settledBatchText(path);
        expect(text).toContain('said');
        expect(piecesIn(text), `split at ${at}`).toEqual([]);
      }
    });
  });
}
