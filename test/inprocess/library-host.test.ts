import { getEventListeners } from 'node:events';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { AnswerBody } from '../../src/client/answer-body.js';
import { bodyChunks } from '../../src/client/body-chunks.js';
import { chatModel, chatWithTools, commandTool, ResultBudget, runToolCall, ToolSet, toolEnv } from '../../src/kit/index.js';
import { startEmulator } from '../../src/emulator/server.js';
import { tempFolder } from '../support/temp-folder.js';
import { until } from '../support/until.js';

// router-cli as a library in someone else's process: what it leaves on the process while it works.
const ROOT = resolve(import.meta.dirname, '..', '..');
const FIXTURE = join(ROOT, 'test/support/mcp-fixture-server.mjs');
const dir = tempFolder('router-library-host-');
const exits = () => process.listenerCount('exit');

describe('a host process', () => {
  it('twelve tool commands in flight hold one exit listener between them (eleven made node warn on the host\'s stderr), none once done', async () => {
    const base = exits();
    // Each call says it started, then waits for the test's word: all twelve are running when counted.
    const script = 'touch "$0/started.$$"; while [ ! -e "$0/go" ]; do sleep 0.02; done; echo ok';
    const tool = commandTool({ name: 'wait', parameters: { type: 'object', properties: {} } }, ['/bin/sh', '-c', script, dir()], toolEnv(process.env));
    const tools = new Map([['wait', tool]]);
    const signal = AbortSignal.timeout(60_000);
    const calls = Array.from({ length: 12 }, (_, i) => runToolCall(tools, { id: String(i), name: 'wait', arguments: '{}' }, { signal, budget: new ResultBudget() }));
    try {
      expect(await until(() => readdirSync(dir()).filter((f) => f.startsWith('started.')).length === 12)).toBe(true);
      expect(exits() - base).toBe(1);
      expect(getEventListeners(signal, 'abort').length).toBe(1);
    } finally {
      writeFileSync(join(dir(), 'go'), '');
    }
    expect((await Promise.all(calls)).map((r) => r.text.trim())).toEqual(Array(12).fill('ok'));
    expect(exits()).toBe(base);
  });

  it('open MCP servers hold one exit listener between them, none once closed', async () => {
    const base = exits();
    const spec = (name: string) => [process.execPath, FIXTURE, 'env', join(dir(), name)].map((a) => `'${a}'`).join(' ');
    const tools = await ToolSet.open({ mcp: [spec('one'), spec('two')], env: toolEnv(process.env) });
    try {
      expect(existsSync(join(dir(), 'one')) && existsSync(join(dir(), 'two'))).toBe(true);
      expect(exits() - base).toBe(1);
    } finally {
      await tools.close();
    }
    expect(exits()).toBe(base);
  });

  it('an MCP server opened without an env starts with HOME, PATH and the rest of the SDK\'s short list: found by PATH, no key', async () => {
    const tools = await ToolSet.open({ mcp: [`node '${FIXTURE}' env`] });
    try {
      const r = await runToolCall(tools.tools, { id: '1', name: 'env', arguments: '{}' }, { signal: new AbortController().signal, budget: new ResultBudget() });
      const env = JSON.parse(r.text) as Record<string, string>;
      expect(Object.keys(env).filter((k) => ['HOME', 'PATH'].includes(k))).toEqual(['HOME', 'PATH']);
      expect(Object.keys(env).filter((k) => k.startsWith('ROUTER_'))).toEqual([]);
    } finally {
      await tools.close();
    }
  });

  it('twelve requests in flight with one signal of the caller\'s hold one abort listener on it, none once answered', async () => {
    // A server that answers once all twelve have come: they are all under way when counted.
    const waiting: ServerResponse[] = [];
    const server = createServer((req, res) => {
      req.resume();
      waiting.push(res);
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const client = new RouterClient({ apiKey: 'sk-test-12345678', apiRoot: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, maxRetries: 0 });
    try {
      const signal = new AbortController().signal;
      const completion = { id: 'gen-1', object: 'chat.completion', model: 'local/echo', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] };
      const calls = Array.from({ length: 12 }, () => client.chat.create({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }, { signal }));
      expect(await until(() => waiting.length === 12)).toBe(true);
      expect(getEventListeners(signal, 'abort').length).toBe(1);
      for (const res of waiting) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
      expect((await Promise.all(calls)).map((c) => c.choices[0]!.message.content)).toEqual(Array(12).fill('hi'));
      expect(getEventListeners(signal, 'abort').length).toBe(0);
    } finally {
      server.closeAllConnections();
      await client.close();
      await new Promise((closed) => server.close(closed));
    }
  });

  it('a command tool made without an environment runs without the key variables, not with all of this process\'s', async () => {
    const saved = process.env.ROUTER_API_KEY;
    process.env.ROUTER_API_KEY = 'sk-host-key-0123456789';
    try {
      // As a program in plain JavaScript may make it: no env argument.
      const tool = (commandTool as (def: { name: string }, command: string) => ReturnType<typeof commandTool>)({ name: 'env' }, 'env');
      const r = await runToolCall(new Map([['env', tool]]), { id: '1', name: 'env', arguments: '{}' }, { signal: AbortSignal.timeout(30_000), budget: new ResultBudget() });
      expect(r.status).toBe('ok');
      expect(r.text).toContain('PATH=');
      expect(r.text).not.toContain('sk-host-key-0123456789');
    } finally {
      if (saved === undefined) delete process.env.ROUTER_API_KEY;
      else process.env.ROUTER_API_KEY = saved;
    }
  });

  it('a command tool run by a prompt or chatWithTools never sees the client\'s key, whatever variable the program read it from', async () => {
    const emu = await startEmulator({ stateDir: join(dir(), 'emu-keys'), port: 0, batchDelayMs: 0 });
    const { apiKey } = emu.store.firstKeys();
    // The name a program of another service's habits keeps its key in: no router key variable.
    process.env.L3_OTHER_APP_KEY = apiKey;
    const client = new RouterClient({ apiKey: process.env.L3_OTHER_APP_KEY, apiRoot: emu.apiRoot });
    try {
      const tools = [commandTool({ name: 'showenv', parameters: { type: 'object', properties: {} } }, ['env'])];
      const prompted = await chatModel(client, 'local/tools').prompt('please showenv', { tools });
      const outcomes = prompted.toolCalls.map((c) => c.outcome);
      await chatWithTools(client, { model: 'local/tools', messages: [{ role: 'user', content: 'please showenv' }] }, { tools: new Map(tools.map((t) => [t.name, t])), on: { call: (_, outcome) => outcomes.push(outcome) } });
      expect(outcomes.length).toBe(2);
      for (const { text } of outcomes) {
        expect(text).toContain('PATH=');
        expect(text).not.toContain(apiKey);
      }
    } finally {
      delete process.env.L3_OTHER_APP_KEY;
      await client.close();
      await emu.close();
    }
  });

  it('a stream the caller aborts mid-answer fails with the caller\'s reason, as one aborted before its head does', async () => {
    // A server that sends one event and holds the stream open: the abort comes mid-body.
    const chunk = { id: 'gen-1', object: 'chat.completion.chunk', model: 'local/echo', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] };
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write(`data: ${JSON.stringify(chunk)}\n\n`);
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const client = new RouterClient({ apiKey: 'sk-test-12345678', apiRoot: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, maxRetries: 0 });
    try {
      // A reason that is no object too (abort('stop')): it was a ConnectionError, and 0 or '' mid-answer hung.
      for (const reason of [new Error('the user moved on'), new DOMException('The operation was aborted due to timeout', 'TimeoutError'), 'stop', 42, 0, '', null]) {
        await expect(client.chat.create({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
        const stop = new AbortController();
        const stream = await client.chat.stream({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }, { signal: stop.signal });
        const read = (async () => {
          for await (const c of stream) if (c.choices[0]?.delta?.content === 'hi') stop.abort(reason);
        })();
        await expect(read).rejects.toBe(reason);
      }
    } finally {
      server.closeAllConnections();
      await client.close();
      await new Promise((closed) => server.close(closed));
    }
  });

  it('a stream aborted mid-read hands out nothing more, not even the events one network read brought with the one read', async () => {
    // Three events in one write (one network read), then the stream held open, or ended complete.
    const chunk = (content: string) => ({ id: 'gen-1', object: 'chat.completion.chunk', model: 'local/echo', choices: [{ index: 0, delta: { content }, finish_reason: null }] });
    const event = (type: string, extra: object) => ({ type, sequence_number: 1, ...extra });
    const bodies: Record<string, string> = {
      chat: ['one', 'two', 'three'].map((c) => `data: ${JSON.stringify(chunk(c))}\n\n`).join(''),
      responses: ['one', 'two', 'three'].map((delta) => `data: ${JSON.stringify(event('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta }))}\n\n`).join(''),
    };
    let ending = false;
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const body = bodies[req.url!.endsWith('/responses') ? 'responses' : 'chat']!;
      if (ending) res.end(`${body}data: [DONE]\n\n`);
      else res.write(body);
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const client = new RouterClient({ apiKey: 'sk-test-12345678', apiRoot: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, maxRetries: 0 });
    const request = { model: 'local/echo', messages: [{ role: 'user' as const, content: 'hi' }] };
    try {
      for (const ended of [false, true]) {
        ending = ended;
        for (const open of [
          (signal: AbortSignal) => client.chat.stream(request, { signal }),
          (signal: AbortSignal) => client.chat.streamText(request, { signal }),
          (signal: AbortSignal) => client.responses.stream({ model: 'local/echo', input: 'hi' }, { signal }),
        ]) {
          const stop = new AbortController();
          const reason = new Error('the user moved on');
          let seen = 0;
          const read = (async () => {
            for await (const _ of await open(stop.signal)) {
              seen++;
              stop.abort(reason);
            }
          })();
          await expect(read).rejects.toBe(reason);
          expect({ ended, seen }).toEqual({ ended, seen: 1 });
        }
      }
    } finally {
      server.closeAllConnections();
      await client.close();
      await new Promise((closed) => server.close(closed));
    }
  });

  it('an audio body aborted mid-read hands out none of the chunks already come', async () => {
    const body = new AnswerBody({ pause: () => {}, resume: () => {}, abort: () => {} });
    for (const part of ['one', 'two', 'three']) body.push(Buffer.from(part));
    body.end();
    const stop = new AbortController();
    const reason = new Error('the user moved on');
    const seen: string[] = [];
    const read = (async () => {
      for await (const c of bodyChunks({ status: 200, headers: {}, body, requestId: undefined }, 'http://server/', stop.signal)) {
        seen.push(Buffer.from(c).toString());
        stop.abort(reason);
      }
    })();
    await expect(read).rejects.toBe(reason);
    expect(seen).toEqual(['one']);
  });

  it('command tools given one signal directly hold one listener on it, and an abort that comes while one starts ends it', async () => {
    const tool = commandTool({ name: 'sleep' }, ['/bin/sh', '-c', 'touch "$0/slept.$$"; exec sleep 30', dir()], toolEnv(process.env));
    const shared = new AbortController();
    const calls = Array.from({ length: 12 }, () => tool.run({}, shared.signal).then(() => 'ended', (e: unknown) => e));
    expect(await until(() => readdirSync(dir()).filter((f) => f.startsWith('slept.')).length === 12)).toBe(true);
    // Twelve listeners made node warn on the host's stderr.
    expect(getEventListeners(shared.signal, 'abort').length).toBe(1);
    const reason = new Error('enough');
    shared.abort(reason);
    expect(await Promise.all(calls)).toEqual(Array(12).fill(reason));
    expect(getEventListeners(shared.signal, 'abort').length).toBe(0);
    // Aborted before its listener was added (while child_process loaded): the old code spawned it and never settled.
    const early = new AbortController();
    const run = tool.run({}, early.signal);
    early.abort(reason);
    await expect(run).rejects.toBe(reason);
  });
});
