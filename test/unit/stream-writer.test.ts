import { describe, expect, it } from 'vitest';
import { IO } from '../../src/cli/io/io.js';
import { testStreams } from '../support/inprocess.js';

const turn = () => new Promise((r) => setImmediate(r));

describe('streamed text to stdout', () => {
  it('sends a piece on the next turn of the event loop on a terminal', async () => {
    const t = testStreams({ tty: { stdout: true } });
    const writer = new IO({}, t.streams).streamWriter();
    await writer.write('first');
    await turn();
    await turn();
    expect(t.stdout()).toBe('first');
    await writer.end();
  });

  it('sends a fast stream in a few writes, not one per network read, and all of it', async () => {
    const t = testStreams();
    let writes = 0;
    t.streams.stdout.on('data', () => writes++);
    const writer = new IO({}, t.streams).streamWriter();
    let want = '';
    for (let i = 0; i < 2000; i++) {
      await writer.write(` w${i}`);
      want += ` w${i}`;
      await turn(); // the next read of the network
    }
    await writer.end();
    await turn();
    expect(t.stdout()).toBe(want);
    expect(writes).toBeLessThan(200);
  });

  // xargs -P 8 -n 1 router chat … > out.txt: eight answers on one file, each line in one write, none cut into another.
  it('sends whole lines off a terminal, each in one write, the open end with the rest of its line', async () => {
    const t = testStreams();
    const writes: string[] = [];
    t.streams.stdout.on('data', (c: Buffer) => writes.push(c.toString()));
    const writer = new IO({}, t.streams).streamWriter();
    for (const piece of ['prompt number 147', '\n', 'two\nthr', 'ee', '\n', 'open end']) {
      await writer.write(piece);
      await turn();
      await turn();
    }
    await writer.end();
    await turn();
    expect(writes.join('')).toBe('prompt number 147\ntwo\nthree\nopen end');
    // Pieces close together may share a write; no write but the last ends mid-line.
    expect(writes.slice(0, -1).filter((w) => !w.endsWith('\n'))).toEqual([]);
    expect(writes[0]).toBe('prompt number 147\n');
  });
});
