// local/tools in the Responses API: function tools are called with function_call items (the caller's to run), and answered from their outputs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emulatorUsers } from '../support/users.js';

const users = emulatorUsers('router-responses-tools-');
const WEATHER = { type: 'function', name: 'weather', description: 'the weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const NOT_RUN = 'error: the model asked for a tool call that was not run (weather has no "command" in --tools)\n';

describe('responses --tools with local/tools', () => {
  for (const stream of ['--stream', '--no-stream']) {
    it(`the call is a function_call item: printed as a JSON line, exit 11 (${stream})`, async () => {
      const u = users.user();
      const tools = join(u.home, 'tools.json');
      writeFileSync(tools, JSON.stringify([WEATHER]));
      const r = await u.run(['responses', stream, '--model', 'local/tools', '--tools', tools, 'weather in Paris']);
      expect(r).toMatchObject({ code: 11, stderr: NOT_RUN });
      expect(JSON.parse(r.stdout)).toEqual({ id: expect.stringMatching(/^call_/), name: 'weather', arguments: { city: 'weather in Paris' } });
    });
  }

  it('--json: the output holds the function_call item and no message', async () => {
    const u = users.user();
    const tools = join(u.home, 'tools.json');
    writeFileSync(tools, JSON.stringify([WEATHER]));
    const r = await u.run(['responses', '--json', '--no-stream', '--model', 'local/tools', '--tools', tools, 'weather in Paris']);
    expect(r.code).toBe(11);
    const res = JSON.parse(r.stdout) as { status: string; output: { type: string; call_id?: string; name?: string; status?: string }[] };
    expect(res.status).toBe('completed');
    expect(res.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: expect.stringMatching(/^call_/), name: 'weather', status: 'completed' })]);
  });

  it('given the call and its output in --input, it answers in text from them', async () => {
    const u = users.user();
    const tools = join(u.home, 'tools.json');
    writeFileSync(tools, JSON.stringify([WEATHER]));
    const history = join(u.home, 'history.json');
    writeFileSync(history, JSON.stringify([
      { role: 'user', content: 'weather in Paris' },
      { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    ]));
    for (const stream of ['--stream', '--no-stream']) {
      const r = await u.run(['responses', stream, '--model', 'local/tools', '--tools', tools, '--input', history]);
      expect(r, stream).toMatchObject({ code: 0, stdout: 'From the tool results: weather answered: sunny\n' });
    }
  });
});
