import { describe, expect, it, onTestFinished } from 'vitest';
import { startFixtureServer } from '../support/fixture-server.js';
import { runInProcess } from '../support/inprocess.js';

// An answer rendered on a terminal cannot end chat: `- ` × 1000 then a word ended it with
// "internal error: Maximum call stack size exceeded", exit 1, the billed answer never shown.
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'x/y', choices: [{ index: 0, delta, finish_reason: finish }] });

describe('chat on a terminal, an answer nested past the renderer\'s bounds', () => {
  it('is shown as plain text, exit 0', async () => {
    const answer = `${'- '.repeat(1000)}word`;
    const server = await startFixtureServer({ 'POST /api/v1/chat/completions': { events: [chunk({ role: 'assistant', content: answer }), chunk({}, 'stop')], terminator: '[DONE]' } });
    onTestFinished(() => server.close());
    const env = { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_NO_LOG: '1', NO_COLOR: '1' };
    const r = await runInProcess(['--max-retries', '0', 'chat', '--model', 'x/y', 'hi'], { env, tty: { stdin: false, stdout: true, stderr: true } });
    expect(r).toEqual({ code: 0, stdout: `${answer}\n`, stderr: '' });
  });
});
