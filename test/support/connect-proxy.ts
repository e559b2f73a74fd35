import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

export interface ConnectProxy {
  /** `http://127.0.0.1:PORT`, for HTTPS_PROXY / HTTP_PROXY. */
  url: string;
  close(): Promise<void>;
}

/**
 * A real CONNECT proxy on 127.0.0.1 that sends every tunnel to `port` on 127.0.0.1, whatever host it
 * is asked for. `seen` hears each CONNECT first; a status line it returns ("407 …") is the answer
 * instead of a tunnel.
 */
export async function startConnectProxy(port: number, seen: (req: IncomingMessage) => string | undefined = () => undefined): Promise<ConnectProxy> {
  const proxy = createServer((_, res) => res.writeHead(405).end());
  proxy.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    const refusal = seen(req);
    if (refusal) return void client.end(`HTTP/1.1 ${refusal}\r\nProxy-Authenticate: Basic realm="x"\r\n\r\n`);
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise((done) => proxy.close(done));
    },
  };
}
