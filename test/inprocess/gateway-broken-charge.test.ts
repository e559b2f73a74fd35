import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { round } from '../../src/emulator/models/models.js';
import { runCliInProcess } from '../support/cli-env.js';
import { gatewayForAll } from '../support/gateway-for-all.js';

// An upstream's stream that breaks after its first tokens, before any usage came, is charged what was
// relayed (the prompt's text counted and the tokens sent, at the configured prices; speech, its
// characters), as a caller's hang-up is; its generation is kept (finish_reason "error", not cancelled), so `router usage
// --reconcile` settles the CLI's ledger line at once. Was: charged nothing, no generation, the line
// "not known to the service yet" for an hour.
const PROMPT_PRICE = 1e-6;
const COMPLETION_PRICE = 1e-4;
const PRICES = `{ prompt: ${PROMPT_PRICE}, completion: ${COMPLETION_PRICE} }`;
const SENT = 5;

const gw = gatewayForAll({
  prefix: 'router-broken-charge-',
  upstreams: { up: (req, res) => {
    if (req.url!.endsWith('/audio/speech')) {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.write(Buffer.alloc(512, 7));
    } else if (req.url!.endsWith('/responses')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (e: Record<string, unknown>) => res.write(`event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`);
      event({ type: 'response.created', sequence_number: 0, response: { id: 'resp_broken', object: 'response', model: 'm', status: 'in_progress', output: [] } });
      for (let i = 0; i < SENT; i++) event({ type: 'response.output_text.delta', sequence_number: i + 1, item_id: 'msg_x', output_index: 0, content_index: 0, delta: `word${i} ` });
    } else {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: Record<string, unknown>) => res.write(`data: ${JSON.stringify({ id: 'gen-broken', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
      chunk({ role: 'assistant' });
      for (let i = 0; i < SENT; i++) chunk({ content: `word${i} ` });
    }
    // The connection drops once what was written went out: no usage, no end.
    res.write('', () => res.destroy());
  } },
  providers: ({ up }) => `providers:\n  - { name: up, responses: true, base_url: "${up}", models: { test/m: m }, speech_models: { test/tts: tts }, prices: { test/m: ${PRICES}, test/tts: ${PRICES} } }\n`,
});

it.each([
  ['chat', 'gen-broken'],
  ['responses', 'resp_broken'],
  ['speak', undefined],
])('%s: a stream broken after its first tokens is charged what was relayed and reconciled at once', async (command, known) => {
  const { apiKey, managementKey } = gw.gateway.store.firstKeys();
  const env = { ROUTER_API_ROOT: gw.gateway.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_MANAGEMENT_KEY: managementKey, ROUTER_KEYCHAIN: 'off', ROUTER_PROFILE: '', ROUTER_MODEL: '', NO_COLOR: '', ROUTER_CONFIG_DIR: join(gw.dir, `config-${command}`), ROUTER_STATE_DIR: join(gw.dir, `state-${command}`) };
  const run = (args: string[]) => runCliInProcess(args, { env });
  const workspace = gw.gateway.store.findKey(apiKey)!.workspace;
  const before = gw.gateway.store.balance(workspace);
  const r = await run(command === 'speak' ? ['speak', 'part', '--model', 'test/tts', '--voice', 'alloy', '-o', join(gw.dir, 'cut.mp3')] : [command, '--model', 'test/m', 'part']);
  expect(r.code, r.stderr).not.toBe(0);
  if (command !== 'speak') expect(r.stdout).toContain('word4');

  const [line, ...more] = readFileSync(join(env.ROUTER_STATE_DIR, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(more).toHaveLength(0);
  // The gateway's id, not the upstream's (which may repeat over answers).
  const id = line!.id as string;
  if (known) expect(id).not.toBe(known);
  expect(line).toMatchObject({ id });
  expect(line).not.toHaveProperty('cost');
  // "user: part" is 3 tokens, as the fake models count a prompt; speech is its 4 characters, as a hang-up after audio.
  const owed = command === 'speak' ? round(4 * PROMPT_PRICE) : round(round(3 * PROMPT_PRICE) + round(SENT * COMPLETION_PRICE));
  expect(round(before - gw.gateway.store.balance(workspace))).toBe(owed);
  const g = await fetch(`${gw.gateway.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(g.status).toBe(200);
  const tokens = command === 'speak' ? {} : { tokens_prompt: 3, tokens_completion: SENT };
  expect(((await g.json()) as { data: unknown }).data).toMatchObject({ cancelled: false, finish_reason: 'error', streamed: true, provider_name: 'up', total_cost: owed, ...tokens });

  const reconciled = await run(['usage', '--reconcile', '--json']);
  expect(reconciled.stderr).toMatch(/^reconciled 1 call of profile "default": .*; none left$/m);
  expect(JSON.parse(reconciled.stdout)).toMatchObject({ reconciled: [expect.objectContaining({ id })], charged_cost: owed, not_found: [], pending: [] });
});
