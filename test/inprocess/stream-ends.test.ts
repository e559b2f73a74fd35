import { describe, expect, it, onTestFinished } from 'vitest';
import { fixtureRuns, startFixtureServer } from '../support/fixture-server.js';
import { PassThrough } from 'node:stream';
import { testStreams } from '../support/inprocess.js';
import { main } from '../../src/cli/main.js';
import { until } from '../support/until.js';

// An answer is whole only when the service says so: a chat stream whose choice never got a
// finish_reason, or a Responses stream without response.completed/incomplete, was cut, even
// when it ends with `[DONE]`: the text as received, one error line, exit 8 (as any cut stream).
const fixture = fixtureRuns();
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'x/y', choices: [{ index: 0, delta, finish_reason: finish }] });
const usage = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'x/y', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
const chat = (events: unknown[]) => ({ 'POST /api/v1/chat/completions': { events, terminator: '[DONE]' } });
const cut = /^error: the stream ended without the service saying the answer was complete \(no finish_reason\); the answer may be cut\n$/;

describe('a chat stream that ends with [DONE] but no finish_reason', () => {
  it('is a cut stream: the text as received, exit 8', async () => {
    const r = await fixture.against(chat([chunk({ role: 'assistant', content: 'Hello ' }), chunk({ content: 'wor' }), usage]), ['chat', '--model', 'x/y', 'hi']);
    expect(r.code).toBe(8);
    expect(r.stdout).toBe('Hello wor');
    expect(r.stderr).toMatch(cut);
  });

  it('with a finish_reason it is whole: exit 0', async () => {
    const r = await fixture.against(chat([chunk({ role: 'assistant', content: 'Hello' }), chunk({}, 'stop'), usage]), ['chat', '--model', 'x/y', 'hi']);
    expect(r).toMatchObject({ code: 0, stdout: 'Hello\n' });
  });
});

const responseOf = (status: string) => ({ id: 'resp_1', object: 'response', status, output: [], error: null, model: 'x/y' });
const responses = (events: unknown[], terminator?: string) => ({ 'POST /api/v1/responses': { events, terminator } });
const delta = (text: string) => ({ type: 'response.output_text.delta', delta: text, item_id: 'm', output_index: 0, content_index: 0 });

describe('a Responses stream that ends without response.completed', () => {
  it.each([
    ['with [DONE]', '[DONE]'],
    ['with nothing after', undefined],
  ])('%s: the text as received, exit 8', async (_, terminator) => {
    const r = await fixture.against(responses([{ type: 'response.created', response: responseOf('in_progress') }, delta('Hello '), delta('wor')], terminator), ['responses', '--model', 'x/y', 'hi']);
    expect(r.code).toBe(8);
    expect(r.stdout).toBe('Hello wor');
    expect(r.stderr).toMatch(/^error: the stream (ended without the service saying the answer was complete|ended before it was complete)/);
  });
});

describe('chat -i and a stream cut that ended with [DONE]', () => {
  it('does not keep the cut answer as a turn: the next message is sent without it', async () => {
    const server = await startFixtureServer(chat([chunk({ role: 'assistant', content: 'Hello ' }), chunk({ content: 'wor' }), usage]));
    onTestFinished(() => server.close());
    const env = { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_NO_LOG: '1' };
    const t = testStreams({ env: { ...env, NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
    const keys = new PassThrough();
    t.streams.stdin = keys;
    const repl = main(['node', 'router', '--max-retries', '0', 'chat', '-i', '--model', 'x/y'], t.streams);
    keys.write('first\n');
    await until(() => /error/.test(t.stderr()));
    keys.write('second\n');
    await until(() => server.requests.length === 2 && (t.stderr().match(/error/g) ?? []).length === 2);
    keys.write('/exit\n');
    await repl;
    expect(t.stderr()).toMatch(/error: the stream ended without the service saying the answer was complete/);
    expect(server.requests).toHaveLength(2);
    const second = JSON.parse(server.requests[1]!.body) as { messages: { role: string; content: string }[] };
    // The cut exchange is dropped (as any failed turn is), not kept as a whole one.
    expect(second.messages).toEqual([{ role: 'user', content: 'second' }]);
  });
});
