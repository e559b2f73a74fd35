import { expect, it } from 'vitest';
import { startedForAll } from '../support/for-all.js';
import { answersHi, localUpstream } from '../support/upstreams.js';

// The tests' stand-in for an OpenAI-compatible upstream refuses what a real one refuses (a method but
// POST, a body that is no JSON object), saying why: before, it answered any method and took an empty
// body as `{}`, so a gateway sending such a request upstream passed its tests.
const upstream = startedForAll(() => localUpstream(answersHi));

const send = async (method: string, body?: string) => {
  const res = await fetch(`${upstream.baseUrl}/chat/completions`, { method, headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, allow: res.headers.get('allow'), message: ((await res.json()) as { error?: { message?: string } }).error?.message };
};

it('refuses a method but POST with a 405 that says so', async () => {
  expect(await send('GET')).toEqual({ status: 405, allow: 'POST', message: 'GET /v1/chat/completions: only POST is served here' });
  expect((await send('PUT', '{}')).status).toBe(405);
});

it('refuses an empty body, one that is not JSON, and JSON that is not an object with a 400 saying which', async () => {
  expect(await send('POST', '')).toMatchObject({ status: 400, message: 'POST /v1/chat/completions: the body is empty; a JSON object was expected' });
  expect(await send('POST', '{"model":')).toMatchObject({ status: 400, message: expect.stringMatching(/^POST \/v1\/chat\/completions: the body is not JSON: /) });
  expect(await send('POST', '[1]')).toMatchObject({ status: 400, message: 'POST /v1/chat/completions: the body is JSON but not an object' });
});

it('answers a POST of a JSON object', async () => {
  expect(await send('POST', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }))).toEqual({ status: 200, allow: null, message: undefined });
});
