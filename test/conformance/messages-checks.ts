/**
 * `POST /v1/messages` (Anthropic's format) against the official OpenAPI: the request bodies sent
 * (MessagesRequest), whole answers (MessagesResult) of plain, stop-sequence-ended, thinking and tool-calling models, every
 * stream event (MessagesStreamingResponse: its `event` name and `data`), and the error envelopes
 * (AnthropicMessagesErrorResponse) of 400, 401 and 402.
 */
import { post, type TestEnv } from '../helpers.js';
import { loadValidator, type Row } from './checks.js';

type Check = (r: Row, validate: ReturnType<ReturnType<typeof loadValidator>['schema']>, value: unknown, label: string) => void;

const weather = { name: 'get_weather', description: 'the weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

/** The requests checked: plain, a system prompt and a cut, thinking, a tool call and its result sent back. */
function asks(toolUseId: string) {
  return [
    { model: 'local/echo', max_tokens: 64, messages: [{ role: 'user', content: 'hello there' }] },
    { model: 'local/echo', max_tokens: 64, stop_sequences: ['STOP'], messages: [{ role: 'user', content: 'ended by a STOP sequence' }] },
    { model: 'local/lorem', max_tokens: 3, system: [{ type: 'text', text: 'be brief' }], stop_sequences: ['zz'], temperature: 0.5, messages: [{ role: 'user', content: [{ type: 'text', text: 'write 40 words' }] }] },
    { model: 'local/thinker', max_tokens: 400, thinking: { type: 'enabled', budget_tokens: 200 }, messages: [{ role: 'user', content: 'why' }] },
    { model: 'local/tools', max_tokens: 400, tools: [weather], tool_choice: { type: 'auto' }, messages: [{ role: 'user', content: 'weather in Paris' }] },
    {
      model: 'local/tools',
      max_tokens: 400,
      tools: [weather],
      messages: [
        { role: 'user', content: 'weather in Paris' },
        { role: 'assistant', content: [{ type: 'tool_use', id: toolUseId, name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: '{"temp":21}' }] },
      ],
    },
  ];
}

/** The events of an Anthropic stream: each `{event, data}` as the OpenAPI's MessagesStreamingResponse has it. */
function events(text: string): { event: string; data: unknown }[] {
  return text.split('\n\n').filter((f) => f.includes('data:')).map((f) => {
    const lines = f.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? '';
    return { event, data: JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)) };
  });
}

export async function messagesChecks(t: TestEnv, row: (operation: string, check: string) => Row, check: Check): Promise<void> {
  const v = loadValidator();
  const request = row('messages', 'request body (MessagesRequest)');
  const whole = row('messages', 'response (MessagesResult)');
  const stream = row('messages', 'stream events (MessagesStreamingResponse)');
  for (const body of asks('toolu_1')) {
    check(request, v.request('/messages'), body, body.model);
    const r = await post(t, '/v1/messages', body, { 'x-api-key': t.apiKey });
    check(whole, v.response('/messages'), r.json, `${body.model} HTTP ${r.status}`);
    const s = await fetch(`${t.apiRoot}/v1/messages`, { method: 'POST', headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }) });
    const got = events(await s.text());
    stream.checked++;
    if (got.length < 4 || got[0]!.event !== 'message_start' || got.at(-1)!.event !== 'message_stop') {
      stream.failed++;
      stream.failures.push(`${body.model}: events ${got.map((e) => e.event).join(' ')}`);
    }
    for (const e of got) check(stream, v.schema('MessagesStreamingResponse'), e, `${body.model} ${e.event}`);
  }
  const errors = row('messages', 'error envelopes (400/401/402)');
  const poor = await t.admin('workspaces', { credits: 0 });
  for (const [body, key] of [[{ model: 'local/echo', max_tokens: 0, messages: [{ role: 'user', content: 'x' }] }, t.apiKey], [asks('x')[0], 'sk-wrong'], [asks('x')[0], poor.api_key]] as const) {
    const r = await post(t, '/v1/messages', body, {}, key);
    // The OpenAPI lists no 402 for /messages: its errors share one schema, checked as such.
    check(errors, v.schema('AnthropicMessagesErrorResponse'), r.json, `status ${r.status}`);
    if (![400, 401, 402].includes(r.status)) {
      errors.failed++;
      errors.failures.push(`status ${r.status}`);
    }
  }
}
