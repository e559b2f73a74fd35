import type { Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The answers of each connection still waiting their turn: one `close` listener a connection, not one an answer (node warns at eleven). */
const waiting = new WeakMap<Socket, Set<ServerResponse>>();

/**
 * Closes an answer waiting its turn on a connection when that connection closes. Node gives the second
 * of two pipelined HTTP/1.1 requests no socket until the first answer has ended, and tells it nothing
 * when the client goes away meanwhile: its `close` never came, so the gateway relayed its upstream's
 * stream to the end and charged it in full, and a stop waited its bound for it. Destroyed and closed
 * here, it is a caller gone as any other (its upstream let go, what was relayed charged).
 */
export function closeWhenConnectionCloses(req: IncomingMessage, res: ServerResponse): void {
  if (res.socket) return;
  const socket = req.socket;
  let queued = waiting.get(socket);
  if (!queued) {
    const answers = new Set<ServerResponse>();
    waiting.set(socket, answers);
    socket.once('close', () => {
      for (const answer of [...answers]) gone(answer);
      answers.clear();
    });
    queued = answers;
  }
  queued.add(res);
  res.once('close', () => queued.delete(res));
}

function gone(res: ServerResponse): void {
  // Its turn came (the socket's own `close` now reaches it) or it ended: nothing to do.
  if (res.socket || res.writableFinished || res.closed) return;
  res.destroy();
  res.emit('close');
}
