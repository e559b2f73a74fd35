import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { flowingChunks } from '../../src/client/body-chunks.js';

const text = (chunks: Buffer[]) => chunks.map(String);

describe('a body read chunk by chunk (flowingChunks)', () => {
  it('hands out at once, with rest(), what arrived with the chunk it waited for', async () => {
    const body = new PassThrough();
    const chunks = flowingChunks(body);
    const first = chunks.next();
    for (const piece of ['a', 'b', 'c']) body.write(piece);
    expect(String((await first).value)).toBe('a');
    expect(text(chunks.rest())).toEqual(['b', 'c']);
    expect(chunks.rest()).toEqual([]);
    const next = chunks.next();
    body.end('d');
    expect(String((await next).value)).toBe('d');
    expect(await chunks.next()).toEqual({ value: undefined, done: true });
  });

  it('pauses the body while 64 chunks wait, and takes it up again once rest() has taken them', async () => {
    const body = new PassThrough();
    const chunks = flowingChunks(body);
    // A fast stream brings dozens of reads at a time: they are queued without pausing the socket.
    for (let i = 0; i < 40; i++) body.write(String(i % 10));
    await new Promise((resolve) => setImmediate(resolve));
    expect(body.isPaused()).toBe(false);
    for (let i = 40; i < 70; i++) body.write(String(i % 10));
    await new Promise((resolve) => setImmediate(resolve));
    expect(body.isPaused()).toBe(true);
    const read = [(await chunks.next()).value!, ...chunks.rest()];
    expect(body.isPaused()).toBe(false);
    body.end();
    for (let step = await chunks.next(); !step.done; step = await chunks.next()) read.push(step.value, ...chunks.rest());
    expect(Buffer.concat(read).toString()).toBe('0123456789'.repeat(7));
  });
});
