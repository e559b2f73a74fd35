// A stdio MCP server that ends while router writes it a message larger than a pipe holds: the send ends too.
import { describe, expect, it } from 'vitest';
import { GroupStdioTransport } from '../../src/kit/mcp-stdio.js';

const large = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'read', arguments: { text: 'x'.repeat(16 << 20) } } };

describe.skipIf(process.platform === 'win32')('GroupStdioTransport.send to a server that dies mid-write', () => {
  it('fails once the server is gone (its stdin closed)', async () => {
    const t = new GroupStdioTransport({ command: process.execPath, args: ['-e', `process.stdin.once('data', () => process.exit(3))`], env: {} });
    await t.start();
    // Was: a promise that never settled (no 'drain' comes from a dead pipe). Coded as the SDK codes a closed
    // connection, so a server dead at start is said "ended before it answered" whichever noticed first.
    await expect(t.send(large)).rejects.toMatchObject({ message: 'the MCP server ended before it read the whole message', code: -32000 });
    await t.close();
  });

  it('fails once its first process exits, though another of its group holds the pipe unread', async () => {
    const t = new GroupStdioTransport({ command: '/bin/sh', args: ['-c', `sleep 300 & exec "$0" -e "process.stdin.once('data', () => process.exit(3))"`, process.execPath], env: {} });
    await t.start();
    await expect(t.send(large)).rejects.toThrow('the MCP server ended before it read the whole message');
    // The sleep is ended with the group.
    await t.close();
  });

  it('still settles a large message a live server reads whole', async () => {
    const t = new GroupStdioTransport({ command: process.execPath, args: ['-e', `process.stdin.resume()`], env: {} });
    await t.start();
    await expect(t.send(large)).resolves.toBeUndefined();
    await t.close();
  });
});
