import { describe, expect, it } from 'vitest';
import { IO } from '../../src/cli/io/io.js';
import { testStreams } from '../support/inprocess.js';

const turn = () => new Promise((r) => setImmediate(r));

describe('streamed text to stdout', () => {
  it('sends a piece on the next turn of the event loop', async () => {
    const t = testStreams();
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
});
