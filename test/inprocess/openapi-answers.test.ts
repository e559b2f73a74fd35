import { describe, expect, it } from 'vitest';
import { fixtureRuns } from '../support/fixture-server.js';
import { answerValidator, CHAT_ANSWERS, CHAT_STREAMS, RESPONSES_ANSWERS, RESPONSES_STREAMS, schemaValidator, violations } from '../conformance/openapi-fixtures.js';

// The CLI against answers generated from the official OpenAPI (not the emulator's): an answer the
// service marks failed, empty or errored is never exit 0, and text in any allowed shape is printed.
const fixture = fixtureRuns();
const against = fixture.against;

const chatResult = answerValidator('post', '/chat/completions');
const chatChunk = schemaValidator('ChatStreamChunk');
const responsesResult = answerValidator('post', '/responses');
const CHAT = ['chat', '--no-stream', '--model', 'openai/gpt-4', 'hi'];
const CHAT_STREAM = ['chat', '--model', 'openai/gpt-4', 'hi'];
const RESPONSES = ['responses', '--no-stream', '--model', 'openai/gpt-4o', 'hi'];

describe('the fixtures are answers the official schemas allow', () => {
  it.each(Object.entries(CHAT_ANSWERS))('chat completion: %s', (_, make) => expect(violations(chatResult, make())).toBe(''));
  it.each(Object.entries(CHAT_STREAMS))('chat stream: %s', (_, make) => {
    for (const c of make()) expect(violations(chatChunk, c)).toBe('');
  });
  it.each(Object.entries(RESPONSES_ANSWERS))('responses result: %s', (_, make) => expect(violations(responsesResult, make())).toBe(''));
  it.each(Object.entries(RESPONSES_STREAMS))('responses stream: %s', (_, make) => {
    for (const ev of make()) expect(violations(schemaValidator('StreamEvents'), ev)).toBe('');
  });
});

describe('chat completions', () => {
  const answer = (body: unknown) => ({ 'POST /api/v1/chat/completions': { body } });

  it("the schema's example: its text, exit 0", async () => {
    expect(await against(answer(CHAT_ANSWERS.example()), CHAT)).toEqual({ code: 0, stdout: 'The capital of France is Paris.\n', stderr: '' });
  });

  it('content as an array of text parts: the text of the parts is printed', async () => {
    expect(await against(answer(CHAT_ANSWERS.contentParts()), CHAT)).toEqual({ code: 0, stdout: 'Paris, on the Seine.\n', stderr: '' });
  });

  it('content as text parts is the answer --schema checks (and the text a tool loop reads)', async () => {
    const parts = CHAT_ANSWERS.contentParts();
    parts.choices[0].message.content = [{ type: 'text', text: '{"city":' }, { type: 'text', text: '"Paris"}' }];
    const schema = '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}';
    expect(await against(answer(parts), ['chat', '--no-stream', '--model', 'openai/gpt-4', '--schema', schema, 'a city'])).toEqual({ code: 0, stdout: '{"city":"Paris"}\n', stderr: '' });
  });

  it('choices: [] is an empty answer: exit 7, nothing on stdout', async () => {
    const r = await against(answer(CHAT_ANSWERS.noChoices()), CHAT);
    expect(r).toEqual({ code: 7, stdout: '', stderr: 'error: the answer holds no choice (an empty answer)\n' });
  });

  it('finish_reason "error" with null content: exit 7', async () => {
    const r = await against(answer(CHAT_ANSWERS.errorFinish()), CHAT);
    expect(r).toEqual({ code: 7, stdout: '', stderr: 'error: the provider failed (finish_reason "error")\n' });
  });

  it('--json still prints the answer as sent, and the exit code says it failed', async () => {
    const r = await against(answer(CHAT_ANSWERS.noChoices()), ['chat', '--json', '--model', 'openai/gpt-4', 'hi']);
    expect(r.code).toBe(7);
    expect(JSON.parse(r.stdout).choices).toEqual([]);
  });
});

describe('chat streams', () => {
  const stream = (events: unknown[]) => ({ 'POST /api/v1/chat/completions': { events, terminator: '[DONE]' } });

  it("the schema's example chunk: its text, exit 0", async () => {
    expect(await against(stream(CHAT_STREAMS.example()), CHAT_STREAM)).toEqual({ code: 0, stdout: 'Hello\n', stderr: '' });
  });

  it('a refusal delta is the text printed', async () => {
    expect(await against(stream(CHAT_STREAMS.refusal()), CHAT_STREAM)).toEqual({ code: 0, stdout: 'I cannot help with that.\n', stderr: '' });
  });

  it('a stream of no choice at all (only usage) is an empty answer: exit 7', async () => {
    for (const args of [CHAT_STREAM, ['chat', '--stream', '--json', '--model', 'openai/gpt-4', 'hi']]) {
      const r = await against(stream(CHAT_STREAMS.usageOnly()), args);
      expect(r.code).toBe(7);
      expect(r.stderr).toBe('error: the answer holds no choice (an empty answer)\n');
    }
  });

  it('a chunk that finishes with "error" and no error object: the text before it, then exit 7', async () => {
    const r = await against(stream(CHAT_STREAMS.errorFinish()), CHAT_STREAM);
    expect(r).toEqual({ code: 7, stdout: 'Hello', stderr: 'error: the provider failed mid-stream (finish_reason "error")\n' });
  });

  it('the text of the chunk that finishes with "error" is printed too (and with --json, that chunk)', async () => {
    const r = await against(stream(CHAT_STREAMS.errorFinishWithText()), CHAT_STREAM);
    expect(r).toEqual({ code: 7, stdout: 'Hello, wor', stderr: 'error: the provider failed mid-stream (finish_reason "error")\n' });
    const json = await against(stream(CHAT_STREAMS.errorFinishWithText()), ['chat', '--stream', '--json', '--model', 'openai/gpt-4', 'hi']);
    expect(json.code).toBe(7);
    expect(json.stdout.trim().split('\n').map((l) => JSON.parse(l).choices[0].finish_reason)).toEqual([null, 'error']);
  });
});

describe('responses', () => {
  const answer = (body: unknown) => ({ 'POST /api/v1/responses': { body } });

  it("the schema's example: its text, exit 0", async () => {
    const r = await against(answer(RESPONSES_ANSWERS.example()), RESPONSES);
    expect(r).toEqual({ code: 0, stdout: 'Why did the chicken cross the road? To get to the other side!\n', stderr: '' });
  });

  it('status failed with an error: the partial text, then the error and exit 7', async () => {
    const r = await against(answer(RESPONSES_ANSWERS.failed()), RESPONSES);
    expect(r).toEqual({ code: 7, stdout: 'Why did the chicken cross the road? To get to the other side!\n', stderr: 'error: the response failed: the upstream provider went away\n' });
  });

  it('status cancelled: exit 7', async () => {
    const r = await against(answer(RESPONSES_ANSWERS.cancelled()), ['responses', '--json', '--model', 'openai/gpt-4o', 'hi']);
    expect(r.code).toBe(7);
    expect(JSON.parse(r.stdout).status).toBe('cancelled');
    expect(r.stderr).toBe('error: the response was cancelled\n');
  });

  it('a streamed refusal is the text printed', async () => {
    const r = await against({ 'POST /api/v1/responses': { events: RESPONSES_STREAMS.refusal() } }, ['responses', '--model', 'openai/gpt-4o', 'hi']);
    expect(r).toEqual({ code: 0, stdout: "I'm sorry\n", stderr: '' });
  });

  it('a completed response with no output at all is an empty answer: exit 7, streamed or not', async () => {
    const said = 'error: the response holds no output (an empty answer)\n';
    expect(await against(answer(RESPONSES_ANSWERS.noOutput()), RESPONSES)).toEqual({ code: 7, stdout: '', stderr: said });
    const streamed = await against({ 'POST /api/v1/responses': { events: RESPONSES_STREAMS.noOutput() } }, ['responses', '--model', 'openai/gpt-4o', 'hi']);
    expect(streamed).toMatchObject({ code: 7, stderr: said });
    expect(streamed.stdout.trim()).toBe('');
  });

  it('a refusal part is the text printed', async () => {
    expect(await against(answer(RESPONSES_ANSWERS.refusal()), RESPONSES)).toEqual({ code: 0, stdout: 'I cannot help with that.\n', stderr: '' });
  });
});

describe('an error body that is JSON but not the service\'s envelope', () => {
  const problem = (status: number) => ({
    'POST /api/v1/chat/completions': { status, contentType: 'application/problem+json', body: { type: 'about:blank', title: 'Unprocessable Entity', status, detail: 'the gateway refused the body' } },
  });

  it('application/problem+json: its title and detail, the exit code of its status', async () => {
    const r = await against(problem(422), CHAT);
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'error: POST /api/v1/chat/completions: 422 Unprocessable Entity: the gateway refused the body\n' });
  });

  it('a 404 that is not the service\'s: what it says, and the question about the API root', async () => {
    const r = await against(problem(404), CHAT);
    expect(r.code).toBe(5);
    expect(r.stderr).toBe(`error: POST /api/v1/chat/completions: 404 Not Found: not an API answer (Unprocessable Entity: the gateway refused the body): is ${fixture.server!.apiRoot} the API root (the URL before /v1)?\n`);
  });

  it("the service's own 404 envelope gets no such question", async () => {
    const r = await against({}, CHAT);
    expect(r).toEqual({ code: 5, stdout: '', stderr: 'error: POST /api/v1/chat/completions: 404 Not Found: no fixture for POST /api/v1/chat/completions\n' });
  });
});

it('router api: a problem+json error is shown by its title and detail, the body printed as sent', async () => {
  const body = { type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'the gateway limits this client' };
  const r = await against({ 'GET /api/v1/models': { status: 429, contentType: 'application/problem+json', body } }, ['api', '/v1/models']);
  expect(r.code).toBe(6);
  expect(JSON.parse(r.stdout)).toEqual(body);
  expect(r.stderr).toBe('error: GET /api/v1/models: 429 Too Many Requests: the gateway limits this client\n');
});
