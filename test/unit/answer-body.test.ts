import { describe, expect, it } from 'vitest';
import { AnswerBody, type Flow } from '../../src/client/answer-body.js';

const text = (chunks: Buffer[]) => chunks.map(String);

/** A Flow that records what the body asked of the socket. */
function flow(): Flow & { paused: boolean; aborted: Error | undefined } {
  return {
    paused: false,
    aborted: undefined,
    pause() {
      this.paused = true;
    },
    resume() {
      this.paused = false;
    },
    abort(reason: Error) {
      this.aborted = reason;
    },
  };
}

describe('an answer body read chunk by chunk (AnswerBody)', () => {
  it('hands out at once, with rest(), what arrived with the chunk it waited for', async () => {
    const body = new AnswerBody(flow());
    const first = body.next();
    for (const piece of ['a', 'b', 'c']) body.push(Buffer.from(piece));
    expect(String((await first).value)).toBe('a');
    expect(text(body.rest())).toEqual(['b', 'c']);
    expect(body.rest()).toEqual([]);
    const next = body.next();
    body.push(Buffer.from('d'));
    body.end();
    expect(String((await next).value)).toBe('d');
    expect(await body.next()).toEqual({ value: undefined, done: true });
  });

  it('pauses the socket while 64 chunks wait, and takes it up again once rest() has taken them', async () => {
    const f = flow();
    const body = new AnswerBody(f);
    // A fast stream brings dozens of reads at a time: they are queued without pausing the socket.
    for (let i = 0; i < 40; i++) body.push(Buffer.from(String(i % 10)));
    expect(f.paused).toBe(false);
    for (let i = 40; i < 70; i++) body.push(Buffer.from(String(i % 10)));
    expect(f.paused).toBe(true);
    const read = [(await body.next()).value!, ...body.rest()];
    expect(f.paused).toBe(false);
    body.end();
    for (let step = await body.next(); !step.done; step = await body.next()) read.push(step.value, ...body.rest());
    expect(Buffer.concat(read).toString()).toBe('0123456789'.repeat(7));
  });

  it('fails a waiting reader with the failure, and after the chunks that came before it', async () => {
    const body = new AnswerBody(flow());
    body.push(Buffer.from('a'));
    const cut = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    body.fail(cut);
    expect(String((await body.next()).value)).toBe('a');
    await expect(body.next()).rejects.toBe(cut);
  });

  it('closes the connection when left early, and a reader then fails with "premature close"', async () => {
    const f = flow();
    const body = new AnswerBody(f);
    const waiting = body.next();
    await body.return();
    expect(f.aborted).toBeInstanceOf(Error);
    await expect(waiting).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });

  it('text() joins the chunks as UTF-8, a character split between two reads included', async () => {
    const body = new AnswerBody(flow());
    const euro = Buffer.from('€');
    body.push(euro.subarray(0, 1));
    body.push(euro.subarray(1));
    body.end();
    expect(await body.text()).toBe('€');
  });

  it('dump() drops a short rest and resolves at its end; a long one closes the connection instead', async () => {
    const short = new AnswerBody(flow());
    short.push(Buffer.alloc(10));
    const dumped = short.dump();
    short.push(Buffer.alloc(10));
    short.end();
    await dumped;
    const f = flow();
    const long = new AnswerBody(f);
    const cut = long.dump();
    long.push(Buffer.alloc(200 * 1024));
    await cut;
    expect(f.aborted).toBeInstanceOf(Error);
  });

  it('takeAll() takes what is queued without waiting; whenReadable() waits for the next chunk, the end or a failure', async () => {
    const body = new AnswerBody(flow());
    expect(body.takeAll()).toEqual([]);
    const readable = body.whenReadable();
    body.push(Buffer.from('a'));
    body.push(Buffer.from('b'));
    await readable;
    expect(text(body.takeAll()!)).toEqual(['a', 'b']);
    const cut = new Error('cut');
    body.push(Buffer.from('c'));
    body.fail(cut);
    await body.whenReadable();
    expect(text(body.takeAll()!)).toEqual(['c']);
    expect(() => body.takeAll()).toThrow(cut);
    const whole = new AnswerBody(flow());
    const ended = whole.whenReadable();
    whole.end();
    await ended;
    expect(whole.takeAll()).toBeNull();
  });
});
