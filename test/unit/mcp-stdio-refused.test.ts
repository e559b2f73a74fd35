// A stdio MCP server that sends a line past MAX_MESSAGE_BYTES and goes on writing: refused once, closed once.
import { describe, expect, it } from 'vitest';
import { GroupStdioTransport, MAX_MESSAGE_BYTES } from '../../src/kit/mcp-stdio.js';
import { until } from '../support/until.js';

describe.skipIf(process.platform === 'win32')('GroupStdioTransport past its bound', () => {
  it('stops reading the server at the first message too long, and closes it once', async () => {
    // Writes without a newline, without end: past the bound, then as much again while it is closed.
    const spew = `const b = Buffer.alloc(1 << 20, 120); (function w() { while (process.stdout.write(b)); process.stdout.once('drain', w); })();`;
    const t = new GroupStdioTransport({ command: process.execPath, args: ['-e', spew], env: {} });
    let closes = 0;
    const close = t.close.bind(t);
    t.close = () => {
      closes++;
      return close();
    };
    let closed = false;
    t.onclose = () => (closed = true);
    await t.start();
    expect(await until(() => closed)).toBe(true);
    expect(t.refused).toBe(`it sent a message of more than ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB`);
    // Was: one close() more for every chunk that came after the refusal (hundreds: each a 2 s timer and a group's end).
    expect(closes).toBe(1);
  });
});
