import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Ways a streaming server can misbehave after answering 200. */
export type Misbehaviour = 'malformed-then-flood' | 'malformed-then-stall' | 'huge-line' | 'error-then-stall' | 'headers-then-stall';

export interface BadServer {
  apiRoot: string;
  close(): Promise<void>;
}

const chunk = (text: string) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'x/y', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;

function misbehave(kind: Misbehaviour, res: ServerResponse, responses: boolean): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const good = responses ? `data: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'partial ' })}\n\n` : chunk('partial ');
  res.write(good);
  const flood = () => {
    // Writes until the client stops reading, then keeps the line open.
    const piece = Buffer.alloc(64 * 1024, 'x');
    const more = () => {
      while (res.write(piece)) {
        /* fill the socket */
      }
      res.once('drain', more);
    };
    more();
  };
  if (kind === 'malformed-then-flood') {
    res.write('data: {not json\n\n');
    flood();
  } else if (kind === 'malformed-then-stall') {
    res.write('data: {not json\n\n');
  } else if (kind === 'huge-line') {
    res.write('data: "');
    flood();
  } else if (kind === 'error-then-stall') {
    const err = responses
      ? { type: 'error', code: 'server', message: 'the provider failed mid-stream' }
      : { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'x/y', choices: [{ index: 0, delta: {}, finish_reason: 'error' }], error: { code: 502, message: 'the provider failed mid-stream' } };
    res.write(`data: ${JSON.stringify(err)}\n\n`);
  }
  // headers-then-stall: nothing more, the line stays open.
}

/** A server on 127.0.0.1 that answers every request with one misbehaviour; it never ends a response by itself. */
export async function startBadServer(kind: Misbehaviour): Promise<BadServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => misbehave(kind, res, (req.url ?? '').includes('/responses')));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    apiRoot: `http://127.0.0.1:${port}/api`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
