import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A small local HTTP server standing in for an upstream that misbehaves; `seen` keeps each request's headers. */
export interface LocalUpstream {
  baseUrl: string;
  seen: IncomingMessage['headers'][];
  close(): Promise<void>;
}

export async function localUpstream(answer: (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => void): Promise<LocalUpstream> {
  const seen: IncomingMessage['headers'][] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    seen.push(req.headers);
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => answer(req, res, raw ? (JSON.parse(raw) as Record<string, unknown>) : {}));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    seen,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/** A port where nothing listens: a server opened and closed again. */
export async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export const sseChunk = (content: string | null, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'gen-local', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: content === null ? { role: 'assistant' } : { role: 'assistant', content }, finish_reason: finish }] })}\n\n`;

/** Never answers: the request is read and the connection kept open. */
export const stall = () => localUpstream(() => {});
/** Answers every request with this status. */
export const failing = (status: number) => localUpstream((_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code: status, message: `upstream says ${status}` } }));
});
/** Starts a stream, sends `tokens` chunks with a token (a role-only chunk first), then drops the connection. */
export const breaking = (tokens: number) => localUpstream((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(sseChunk(null));
  for (let i = 0; i < tokens; i++) res.write(sseChunk(`token${i} `));
  setTimeout(() => res.destroy(), 20);
});
