import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { spawnServe } from '../support/serve-process.js';
import { payloads, recordingGateways, STREAMED_ASK } from '../support/recording-gateways.js';
import { SETTLE } from '../support/until.js';
import { webServer } from '../support/upstreams.js';

// `router serve --record` killed -9 while it relays a stream (docs/gateway.md, Record and replay): the
// events it relayed are on disk in a partial cassette, marked as one; --replay answers nothing from
// it and says so; --record-missing records the request again, whole, and the partial file goes.
const { dir, serve, ask, holdNextStream, adopt } = recordingGateways('router-record-kill-', ', prices: { test/m: { prompt: 0.000001, completion: 0.000002 } }');
const cassettes = join(dir, 'cassettes');

describe('a gateway killed -9 while it records a stream', () => {
  it('leaves a partial cassette of what it relayed; --replay refuses it, --record-missing records it whole', async () => {
    // The upstream sends the stream's first KiB, then holds the rest: the gateway is mid-stream when killed.
    const faults = await holdNextStream();
    expect(faults.status).toBe(200);

    const recording = await serve(['--record', cassettes], 'state-1');
    const res = await ask(recording.g);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let relayed = '';
    while (payloads(relayed).length < 2) relayed += new TextDecoder().decode((await reader.read()).value);
    const partialFile = () => readdirSync(cassettes).find((f) => /\.json\.\d+@\d+~\d+\.partial$/.test(f));
    // Written as it comes: the head and the events relayed so far (before: nothing until the stream's end).
    await vi.waitFor(() => expect(readFileSync(join(cassettes, partialFile() ?? 'none'), 'utf8').split('\n').length).toBeGreaterThan(2), SETTLE);
    recording.g.child.kill('SIGKILL');
    await recording.g.exited;
    // The gateway may have relayed more than was read before the kill: the caller was sent all it can still read.
    for (;;) {
      const more = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (more.done) break;
      relayed += new TextDecoder().decode(more.value);
    }

    expect(readdirSync(cassettes).filter((f) => f.endsWith('.json'))).toEqual([]);
    const [head, ...lines] = readFileSync(join(cassettes, partialFile()!), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(head.partial).toMatch(/kill -9/);
    expect(head.provider).toBe('up');
    expect(head.request.body).toMatchObject({ model: 'local/lorem', stream: true, messages: STREAMED_ASK.messages });
    expect(head.response.status).toBe(200);
    expect(head.response.chunks).toBeUndefined();
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(Object.keys(l).sort()).toEqual(['after_ms', 'data']);
    // What it kept is what the caller was sent, event for event (ids aside: the gateway gives its own).
    const sent = payloads(relayed.slice(0, relayed.lastIndexOf('\n') + 1)).map((p) => JSON.parse(p).choices?.[0]?.delta);
    expect(lines.map((l) => l.data.choices?.[0]?.delta)).toEqual(sent.slice(0, lines.length));

    const replaying = await serve(['--replay', cassettes, '--replay-timing', '0'], 'state-2');
    const miss = await ask(replaying.g);
    expect(miss.status).toBe(404);
    expect(replaying.stderr()).toContain(`replay: ${join(cassettes, partialFile()!)} is a partial recording (its gateway was stopped mid-stream): not replayed; router serve --record-missing would record it again`);
    replaying.g.child.kill('SIGTERM');
    await replaying.g.exited;

    const filling = await serve(['--replay', cassettes, '--record-missing'], 'state-3');
    const again = await ask(filling.g);
    expect(again.status).toBe(200);
    expect(payloads(await again.text()).at(-1)).toBe('[DONE]');
    expect(filling.stderr()).toMatch(/record: .*\.json\.\d+@\d+~\d+\.partial was a partial recording \(its gateway was stopped mid-stream\): removed, to be recorded again/);
    filling.g.child.kill('SIGTERM');
    await filling.g.exited;
    const files = readdirSync(cassettes);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^up-local_lorem-\w+\.json$/);
    const whole = JSON.parse(readFileSync(join(cassettes, files[0]!), 'utf8'));
    expect(whole.partial).toBeUndefined();
    expect(whole.response.chunks.at(-1).data).toBe('[DONE]');

    const replayed = await serve(['--replay', cassettes, '--replay-timing', '0'], 'state-4');
    const answer = await ask(replayed.g);
    expect(answer.status).toBe(200);
    expect(payloads(await answer.text()).at(-1)).toBe('[DONE]');
    expect(replayed.stderr()).not.toContain('partial');
  });

  // Speech was kept only once its audio ended: a gateway killed -9 mid-answer left nothing of it.
  it('leaves the audio it relayed of a speech answer in a partial cassette, piece by piece', async () => {
    const held = new Set<() => void>();
    const tts = await webServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      // Two pieces of audio, then the rest held until the test ends.
      res.write(Buffer.alloc(2048, 1));
      setTimeout(() => res.write(Buffer.alloc(2048, 2)), 20);
      held.add(() => res.end());
    });
    try {
      const speechDir = join(dir, 'speech-cassettes');
      const providers = join(dir, 'speech-providers.yaml');
      writeFileSync(providers, `providers:\n  - { name: tts, base_url: "${tts.root}/v1", speech_models: { test/tts: tts-1 }, prices: { test/tts: { prompt: 0.000001, completion: 0 } } }\n`);
      const g = await spawnServe(['--state', join(dir, 'speech-state'), '--providers', providers, '--record', speechDir], { HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg') });
      adopt(g);
      const res = await fetch(`${g.info.api_root}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${g.info.management_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/tts', voice: 'alloy', input: 'the tide comes in' }) });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let heard = 0;
      while (heard < 4096) heard += (await reader.read()).value!.length;
      const partialFile = () => readdirSync(speechDir).find((f) => /\.json\.\d+@\d+~\d+\.partial$/.test(f));
      // The head and both pieces on disk while the answer is still under way (before: no file until its end).
      const onDisk = () => readFileSync(join(speechDir, partialFile() ?? 'none'), 'utf8').trimEnd().split('\n').slice(1).reduce((n, l) => n + Buffer.from((JSON.parse(l) as { base64: string }).base64, 'base64').length, 0);
      await vi.waitFor(() => expect(onDisk()).toBe(4096), SETTLE);
      g.child.kill('SIGKILL');
      await g.exited;
      void reader.cancel().catch(() => undefined);

      expect(readdirSync(speechDir).filter((f) => f.endsWith('.json'))).toEqual([]);
      const [head, ...pieces] = readFileSync(join(speechDir, partialFile()!), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
      expect(head.partial).toMatch(/kill -9/);
      expect([head.provider, head.endpoint, head.response.status, head.response.audio]).toEqual(['tts', 'speech', 200, undefined]);
      expect(head.request.body).toMatchObject({ model: 'tts-1', voice: 'alloy', input: 'the tide comes in' });
      expect(Buffer.concat(pieces.map((p) => Buffer.from(p.base64, 'base64')))).toEqual(Buffer.concat([Buffer.alloc(2048, 1), Buffer.alloc(2048, 2)]));
      for (const p of pieces) expect(Object.keys(p).sort()).toEqual(['after_ms', 'base64']);
    } finally {
      for (const end of held) end();
      await tts.close();
    }
  });
});
