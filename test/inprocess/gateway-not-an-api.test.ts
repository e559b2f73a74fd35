import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayForAll } from '../support/gateway-for-all.js';

// A base_url that reaches something other than the API: a redirect (http for https, a moved host),
// a web UI's page, a proxy's HTML refusal. The 502 (and router_metadata) says which, in words a
// person can act on; before, each was "an answer that is not JSON".
const PAGES: Record<string, [number, Record<string, string>, string]> = {
  moved: [301, { location: 'https://api.example.com/v1/chat/completions', 'content-type': 'text/html' }, '<html><body>Moved Permanently</body></html>'],
  webui: [200, { 'content-type': 'text/html; charset=utf-8' }, '<!doctype html>\n<html><head><title>Open WebUI</title></head></html>'],
  proxy: [413, { 'content-type': 'text/html' }, '<html>\n<head><title>413 Request Entity Too Large</title></head></html>'],
  blank: [200, {}, ''],
  // A server that streams whatever it is asked (stream: false too).
  streams: [200, { 'content-type': 'text/event-stream' }, 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'],
};

// One upstream a page, answering every request with it, named as the page in the providers file.
const gw = gatewayForAll({
  prefix: 'router-gateway-not-api-',
  upstreams: Object.fromEntries(
    Object.entries(PAGES).map(([name, [status, headers, text]]) => [name, (_req: unknown, res: ServerResponse) => {
      res.writeHead(status, headers);
      res.end(text);
    }]),
  ),
  providers: (urls) => `providers:\n${Object.keys(PAGES).map((name) => `  - { name: ${name}, base_url: "${urls[name]}", models: { test/${name}: m }, embedding_models: { test/${name}-embed: m }, speech_models: { test/${name}-tts: m } }`).join('\n')}\n`,
});

const ask = async (path: string, body: Record<string, unknown>) => {
  const res = await fetch(`${gw.gateway.apiRoot}/v1/${path}`, { method: 'POST', headers: { authorization: `Bearer ${path === 'audio/speech' ? gw.gateway.store.firstKeys().managementKey : gw.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, message: ((await res.json()) as { error: { message: string } }).error.message };
};

describe('a provider whose base_url reaches no API', () => {
  it.each([
    ['moved', 'moved: HTTP 301, redirected to https://api.example.com/v1/chat/completions: base_url must be where the API answers (redirects are not followed)'],
    ['webui', "webui: HTTP 200 text/html, not JSON (<!doctype html> <html><head><title>Open WebUI</title></head></html>): is base_url the API's (for Ollama, vLLM and OpenAI it ends in /v1)?"],
    ['proxy', 'proxy: HTTP 413 text/html, not JSON (<html> <head><title>413 Request Entity Too Large</title></head></html>)'],
    ['blank', "blank: HTTP 200 no content-type, not JSON: is base_url the API's (for Ollama, vLLM and OpenAI it ends in /v1)?"],
  ])('%s: chat, streamed or not, and embeddings are a 502 that says what answered', async (name, why) => {
    for (const stream of [false, true]) {
      expect(await ask('chat/completions', { model: `test/${name}`, stream, messages: [{ role: 'user', content: 'x' }] })).toEqual({ status: 502, message: `All providers for the requested models are unavailable: ${why}` });
    }
    const embed = await ask('embeddings', { model: `test/${name}-embed`, input: 'x' });
    expect(embed).toEqual({ status: 502, message: `All providers for the requested models are unavailable: ${why}` });
  });

  it('a server that streams a request asking for a whole answer is said so, not sent to check its base_url', async () => {
    // Before: "… not JSON (data: …): is base_url the API's (… ends in /v1)?", though the base_url was right.
    const why = 'streams: HTTP 200 text/event-stream, not JSON (data: {"choices":[{"delta":{"content":"hi"}}]} data: [DONE]): it streamed, though the request asked for a whole answer (stream false or unset)';
    expect(await ask('chat/completions', { model: 'test/streams', messages: [{ role: 'user', content: 'x' }] })).toEqual({ status: 502, message: `All providers for the requested models are unavailable: ${why}` });
    expect(await ask('embeddings', { model: 'test/streams-embed', input: 'x' })).toEqual({ status: 502, message: `All providers for the requested models are unavailable: ${why}` });
  });

  it.each([
    ['moved', 'moved: HTTP 301, redirected to https://api.example.com/v1/chat/completions: base_url must be where the API answers (redirects are not followed)'],
    ['webui', "webui: HTTP 200 text/html, not audio (<!doctype html> <html><head><title>Open WebUI</title></head></html>): is base_url the API's (for Ollama, vLLM and OpenAI it ends in /v1)?"],
  ])('%s: speech is a 502 that says so (before: the redirect relayed as the caller\'s own 301, the page as audio)', async (name, why) => {
    expect(await ask('audio/speech', { model: `test/${name}-tts`, input: 'x', voice: 'alloy' })).toEqual({ status: 502, message: `All providers for the requested models are unavailable: ${why}` });
  });
});
