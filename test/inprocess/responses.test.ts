import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { post, sharedCliEnv, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
const sent = sharedCliEnv((e) => (t = e));
let inputs = 0;
const emptyInput = (json: string) => {
  const f = join(t.dir, `empty-input-${++inputs}.json`);
  writeFileSync(f, json);
  return f;
};

describe('router responses', () => {
  it('streams output_text deltas by default', async () => {
    const r = await t.run(['responses', '--model', 'local/echo', 'stream me please']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('stream me please\n');
    expect(sent('/v1/responses')[0]!.body.stream).toBe(true);
  });

  it('--json prints the response object with usage and the echoed settings', async () => {
    // spec: responses.echo
    const r = await t.run(['responses', '--model', 'local/lorem', '--json', '--max-output-tokens', '4', '--temperature', '0.3', '--metadata', 'a=b', '--instructions', 'be short', 'write 20 words']);
    const res = JSON.parse(r.stdout);
    expect(res).toMatchObject({ object: 'response', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, temperature: 0.3, metadata: { a: 'b' }, instructions: 'be short' });
    expect(res.output[0]).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text' }] });
    expect(res.usage.output_tokens).toBe(4);
    expect(res.usage.total_tokens).toBe(res.usage.input_tokens + 4);
  });

  it('--stream --json prints typed events as JSONL ending in response.completed', async () => {
    // spec: responses.stream
    const r = await t.run(['responses', '--model', 'local/echo', '--stream', '--json', 'a b']);
    const types = r.stdout.trim().split('\n').map((l) => JSON.parse(l).type);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types.filter((x) => x === 'response.output_text.delta')).toHaveLength(2);
  });

  it('takes input items from a file and sends the named options', async () => {
    const f = join(t.dir, 'history.json');
    writeFileSync(f, JSON.stringify([{ role: 'user', content: 'first' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'second' }]));
    const tools = join(t.dir, 'tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', name: 'f', description: 'd', parameters: { type: 'object' } }]));
    const r = await t.run(['responses', '--input', f, '--model', 'local/echo', '--no-stream', '--tools', tools, '--tool-choice', 'auto', '--reasoning-effort', 'low', '--reasoning-summary', 'auto', '--text-format', 'text', '--verbosity', 'low', '--service-tier', 'flex', '--max-tool-calls', '5', '--stop-when', 'step_count=3', '--stop-when', 'max_cost=0.5', '--session', 's1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('second\n');
    expect(sent('/v1/responses')[0]!.body).toMatchObject({
      input: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'second' }],
      tools: [{ type: 'function', name: 'f' }], tool_choice: 'auto', reasoning: { effort: 'low', summary: 'auto' }, text: { format: { type: 'text' }, verbosity: 'low' },
      service_tier: 'flex', max_tool_calls: 5, stop_server_tools_when: [{ type: 'step_count_is', step_count: 3 }, { type: 'max_cost', max_cost_in_dollars: 0.5 }], session_id: 's1',
    });
  });

  it('refuses bad input before sending', async () => {
    for (const [args, msg] of [
      [['--previous-response-id', 'resp_1', 'x'], /not supported: each request is independent/],
      [['--max-tool-calls', '31', 'x'], /between 0 and 30/],
      [['--stop-when', 'steps=2', 'x'], /step_count=N or max_cost=USD/],
      [['--input', join(t.dir, 'nope.json')], /cannot read/],
      [['--tool-choice', 'maybe', 'x'], /allowed choices/],
      [['--input', emptyInput('[]')], /^error: --input .*: no input items/],
      [['--input', emptyInput('"  "')], /^error: --input .*: the text is empty/],
    ] as [string[], RegExp][]) {
      const r = await t.run(['responses', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
    expect(t.requests()).toHaveLength(0);
  });

  it('the service refuses a previous-response reference with 400', async () => {
    const r = await post(t, '/v1/responses', { input: 'x', previous_response_id: 'resp_1' });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/full history in input/);
  });
});
