/**
 * Conformance: what the CLI sends and what the emulator answers, checked against the official
 * OpenAPI description (shared/reference) and parsed by the official SDK (@openrouter/sdk).
 * Used by test/conformance.test.ts (asserts zero failures) and `npm run conformance` (prints the table).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { post, type TestEnv } from '../helpers.js';
import { openaiChecks } from './openai-checks.js';
import { specShapeChecks } from './spec-shape-checks.js';
import { answerValidator, requestValidator, schemaValidator } from './openapi-fixtures.js';
import { metadataChecks } from './metadata-checks.js';
import { deployedBatchChecks } from './deployed-batch-checks.js';
import { sdkToolChecks } from './sdk-tool-checks.js';
import { messagesChecks } from './messages-checks.js';

export interface Row {
  operation: string;
  check: string;
  checked: number;
  failed: number;
  failures: string[];
}

/** The validators of the official OpenAPI description, each compiled once per process. */
export function loadValidator() {
  return {
    request: (path: string) => requestValidator('post', path),
    response: (path: string, status = '200', type = 'application/json') => answerValidator('post', path, status, type),
    schema: (name: string) => schemaValidator(name),
  };
}

type Validate = ((v: unknown) => boolean) & { errors?: { instancePath: string; message?: string }[] | null };

/** `flavor`: the emulator's shape of the batch resource (api.md's, or the deployed service's). */
export async function runConformance(t: TestEnv, flavor: 'spec' | 'deployed' = 'spec'): Promise<Row[]> {
  const v = loadValidator();
  const rows: Row[] = [];
  const row = (operation: string, check: string) => {
    const r: Row = { operation, check, checked: 0, failed: 0, failures: [] };
    rows.push(r);
    return r;
  };
  const check = (r: Row, validate: Validate, value: unknown, label: string) => {
    r.checked++;
    if (!validate(value)) {
      r.failed++;
      r.failures.push(`${label}: ${(validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath} ${e.message}`).join('; ')}`);
    }
  };
  const mgmt = { ROUTER_MANAGEMENT_KEY: t.managementKey };
  const sentBodies = (path: string) => t.requests().filter((q) => q.path === path).map((q) => q.body);

  // Chat completions.
  t.clearRequests();
  const chatRuns = [
    ['chat', '--json', '--no-stream', '--model', 'local/echo', 'hello'],
    ['chat', '--json', '--no-stream', '--model', 'local/lorem', '--temperature', '0.5', '--top-p', '0.9', '--max-tokens', '5', '--stop', 'x', '--seed', '3', '--metadata', 'a=b', '--session', 's', '--logprobs', '--top-logprobs', '2', 'write 9 words'],
    ['chat', '--json', '--no-stream', '--model', 'local/unavailable', '--models', 'local/echo', '--provider-only', 'local-alpha', '--no-fallbacks', '--router-metadata', '--reasoning-effort', 'low', '--service-tier', 'flex', '--response-format', 'json_object', '-s', 'sys', 'hi'],
  ];
  // Beyond text (issue 33): parts, a schema, tools, reasoning, images, citations.
  const png = join(t.dir, 'conformance.png');
  writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEklEQVR4nGP4z8DAwMDAAMMAAB7YAfxCnGlYAAAAAElFTkSuQmCC', 'base64'));
  const tools = join(t.dir, 'conformance-tools.json');
  writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }]));
  const richRuns = [
    ['chat', '--json', '--no-stream', '--model', 'local/vision', '-a', png, '-a', 'https://example.org/a.pdf', 'what is it'],
    ['chat', '--json', '--no-stream', '--model', 'local/lorem', '--web', '--schema', '{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}', 'x'],
    ['chat', '--json', '--no-stream', '--model', 'local/tools', '--tools', tools, 'weather'],
    ['chat', '--json', '--no-stream', '--model', 'local/thinker', 'why'],
    ['chat', '--json', '--no-stream', '--model', 'local/painter', '--modalities', 'text,image', 'a boat'],
  ];
  chatRuns.push(...richRuns);
  const chatRes = row('chat completions', 'response (ChatResult)');
  for (const args of chatRuns) check(chatRes, v.response('/chat/completions'), JSON.parse((await t.run(args)).stdout), args.slice(-1)[0]!);
  const chunks = row('chat completions', 'stream chunks (ChatStreamChunk)');
  const streamed = await t.run(['chat', '--stream', '--json', '--model', 'local/lorem', 'write 12 words']);
  for (const line of streamed.stdout.trim().split('\n')) check(chunks, v.schema('ChatStreamChunk'), JSON.parse(line), 'chunk');
  for (const args of richRuns) {
    const rich = await t.run(args.map((a) => (a === '--no-stream' ? '--stream' : a)));
    for (const line of rich.stdout.trim().split('\n')) check(chunks, v.schema('ChatStreamChunk'), JSON.parse(line), `${args[4]} chunk`);
  }
  const chatReq = row('chat completions', 'request body (ChatRequest)');
  for (const body of sentBodies('/v1/chat/completions')) check(chatReq, v.request('/chat/completions'), body, 'request');
  const chatErr = row('chat completions', 'error envelopes (400/401/402)');
  const raw = async (path: string, body: unknown, key = t.apiKey) => {
    const r = await post(t, path, body, {}, key);
    return { status: r.status, body: r.json };
  };
  for (const [body, key] of [[{ messages: [] }, t.apiKey], [{ messages: [{ role: 'user', content: 'x' }] }, 'sk-wrong']] as const) {
    const r = await raw('/v1/chat/completions', body, key);
    check(chatErr, v.response('/chat/completions', String(r.status)), r.body, `status ${r.status}`);
  }
  const poor = await t.admin('workspaces', { credits: 0 });
  const r402 = await raw('/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }] }, poor.api_key);
  check(chatErr, v.response('/chat/completions', '402'), r402.body, 'status 402');

  // Responses.
  t.clearRequests();
  const respRes = row('responses', 'response (OpenResponsesResult)');
  // local/tools answers Responses' function tools with function_call items (exit 11: router runs none).
  const responsesTools = join(t.dir, 'conformance-responses-tools.json');
  writeFileSync(responsesTools, JSON.stringify([{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }]));
  for (const args of [['responses', '--json', '--no-stream', '--model', 'local/tools', '--tools', responsesTools, 'weather'], ['responses', '--json', '--no-stream', '--model', 'local/echo', 'hi'], ['responses', '--json', '--no-stream', '--model', 'local/vision', '-a', png, '--web', 'see'], ['responses', '--json', '--no-stream', '--model', 'local/thinker', 'why'], ['responses', '--json', '--no-stream', '--model', 'local/painter', 'a boat'], ['responses', '--json', '--no-stream', '--model', 'local/echo', '--schema', '{"type":"object","properties":{"a":{"type":"boolean"}},"required":["a"]}', 'x'], ['responses', '--json', '--no-stream', '--model', 'local/lorem', '--max-output-tokens', '3', '--instructions', 'x', '--metadata', 'k=v', '--reasoning-effort', 'low', '--text-format', 'text', '--verbosity', 'low', '--stop-when', 'step_count=2', '--max-tool-calls', '4', 'write 10 words']]) {
    check(respRes, v.response('/responses'), JSON.parse((await t.run(args)).stdout), args.slice(-1)[0]!);
  }
  const events = row('responses', 'stream events (StreamEvents)');
  const evOut = await t.run(['responses', '--stream', '--json', '--model', 'local/echo', 'a b c']);
  for (const line of evOut.stdout.trim().split('\n')) check(events, v.schema('StreamEvents'), JSON.parse(line), JSON.parse(line).type);
  for (const model of ['local/thinker', 'local/painter', 'local/tools']) {
    const more = await t.run(['responses', '--stream', '--json', '--model', model, ...(model === 'local/tools' ? ['--tools', responsesTools] : []), 'why']);
    for (const line of more.stdout.trim().split('\n')) check(events, v.schema('StreamEvents'), JSON.parse(line), `${model} ${JSON.parse(line).type}`);
  }
  const respReq = row('responses', 'request body (ResponsesRequest)');
  for (const body of sentBodies('/v1/responses')) check(respReq, v.request('/responses'), body, 'request');
  const respErr = row('responses', 'error envelope (400)');
  const r400 = await raw('/v1/responses', { input: 'x', previous_response_id: 'resp_1' });
  check(respErr, v.response('/responses', '400'), r400.body, 'status 400');

  // Embeddings.
  t.clearRequests();
  const embRes = row('embeddings', 'response');
  for (const args of [['embed', 'a', 'b', '--model', 'local/embed', '--dimensions', '8', '--raw', '--encoding-format', 'base64'], ['embed', 'one', '--model', 'local/embed', '--input-type', 'search_query', '--user', 'u']]) {
    const res = await raw('/v1/embeddings', { input: args[1], model: 'local/embed' });
    check(embRes, v.response('/embeddings'), res.body, 'direct');
    const out = await t.run(args);
    check(embRes, v.response('/embeddings'), JSON.parse(out.stdout), args.join(' '));
  }
  const embReq = row('embeddings', 'request body');
  for (const body of sentBodies('/v1/embeddings')) check(embReq, v.request('/embeddings'), body, 'request');

  // Speech.
  t.clearRequests();
  await t.run(['speak', 'hello there', '--voice', 'alloy', '--model', 'local/tts', '--speed', '1.5', '--instructions', 'calm', '-o', join(t.dir, 'c.mp3')], { env: mgmt });
  await t.run(['speak', 'hello there', '--voice', 'alloy', '--model', 'local/tts', '--format', 'pcm', '-o', join(t.dir, 'c.pcm')], { env: mgmt });
  const speechReq = row('speech', 'request body (SpeechRequest)');
  for (const body of sentBodies('/v1/audio/speech')) check(speechReq, v.request('/audio/speech'), body, 'request');
  const speechErr = row('speech', 'error envelopes (400/401/402)');
  for (const [body, key] of [[{ model: 'local/tts-basic', input: 'x', voice: 'alloy', speed: 2 }, t.managementKey], [{ model: 'local/tts', input: 'x', voice: 'alloy' }, 'sk-wrong']] as const) {
    const r = await raw('/v1/audio/speech', body, key);
    check(speechErr, v.response('/audio/speech', String(r.status)), r.body, `status ${r.status}`);
  }

  await sdkChecks(t, row);
  await openaiChecks(t, row);
  await sdkToolChecks(t, row);
  await messagesChecks(t, row, check);
  await metadataChecks(t, row);
  if (flavor === 'deployed') await deployedBatchChecks(t, row);
  else await specShapeChecks(t, row);
  return rows;
}

/** The official SDK must parse every answer (it validates strictly with zod). */
async function sdkChecks(t: TestEnv, row: (op: string, check: string) => Row): Promise<void> {
  const { OpenRouter } = await import('@openrouter/sdk');
  const sdk = new OpenRouter({ apiKey: t.apiKey, serverURL: `${t.apiRoot}/v1` });
  const msdk = new OpenRouter({ apiKey: t.managementKey, serverURL: `${t.apiRoot}/v1` });
  const origin = new URL(t.apiRoot).origin;
  const attempt = (operation: string, fn: () => Promise<unknown>) => attemptRow(row(operation, 'official SDK parses the answer'), fn);
  await attempt('chat completions', () => sdk.chat.send({ chatRequest: { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] } }));
  await attempt('chat completions', async () => {
    const s = await sdk.chat.send({ chatRequest: { model: 'local/lorem', stream: true, streamOptions: { includeUsage: true }, messages: [{ role: 'user', content: 'write 5 words' }] } });
    for await (const c of s as AsyncIterable<unknown>) void c;
  });
  await attempt('responses', () => sdk.responses.send({ responsesRequest: { model: 'local/echo', input: 'hi' } }));
  await attempt('responses', async () => {
    const s = await sdk.responses.send({ responsesRequest: { model: 'local/echo', input: 'hi you', stream: true } });
    for await (const ev of s as AsyncIterable<{ type: string }>) if (ev.type === 'UNKNOWN') throw new Error('SDK turned a stream event into UNKNOWN');
  });
  await attempt('embeddings', () => sdk.embeddings.generate({ requestBody: { model: 'local/embed', input: 'hi', dimensions: 4 } }));
  await attempt('speech', async () => {
    const s = await msdk.tts.createSpeech({ speechRequest: { model: 'local/tts', input: 'hi there', voice: 'alloy', responseFormat: 'mp3' } });
    let n = 0;
    for await (const c of s as unknown as AsyncIterable<Uint8Array>) n += c.length;
    if (n === 0) throw new Error('no audio');
  });
  await attempt('speech', async () => {
    try {
      await msdk.tts.createSpeech({ speechRequest: { model: 'local/tts-basic', input: 'x', voice: 'alloy', speed: 2 } });
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 400) return;
      throw err;
    }
    throw new Error('expected a 400');
  });
  await attempt('decisions', () =>
    msdk.alpha.decisions.create(
      { decisionsRequest: { model: 'local/judge', state: 'x', questions: { q: { type: 'noul', instructions: 'yes?' }, c: { type: 'choice', instructions: 'which', criteria: { a: 'A', b: 'B' } }, s: { type: 'score', instructions: 'how', criteria: ['lo', 'hi'] } } } },
      { serverURL: origin },
    ),
  );
}

/** One check that passes when `fn` resolves; its error is the row's failure. */
export async function attemptRow(r: Row, fn: () => Promise<unknown>): Promise<void> {
  r.checked++;
  try {
    await fn();
  } catch (err) {
    r.failed++;
    r.failures.push(String((err as Error).message ?? err).slice(0, 300));
  }
}

export function formatTable(rows: Row[]): string {
  const lines = [`${'operation'.padEnd(18)} ${'check'.padEnd(56)} ${'checked'.padStart(7)} ${'failed'.padStart(6)}`];
  for (const r of rows) {
    lines.push(`${r.operation.padEnd(18)} ${r.check.padEnd(56)} ${String(r.checked).padStart(7)} ${String(r.failed).padStart(6)}`);
    for (const f of r.failures) lines.push(`    ${f}`);
  }
  const total = rows.reduce((a, r) => ({ checked: a.checked + r.checked, failed: a.failed + r.failed }), { checked: 0, failed: 0 });
  lines.push(`${'total'.padEnd(75)} ${String(total.checked).padStart(7)} ${String(total.failed).padStart(6)}`);
  return lines.join('\n');
}
