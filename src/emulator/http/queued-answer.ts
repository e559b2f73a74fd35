import type { IncomingMessage, ServerResponse } from 'node:http';

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
  const gone = () => {
    // Its turn came (the socket's own `close` now reaches it) or it ended: nothing to do.
    if (res.socket || res.writableFinished || res.closed) return;
    res.destroy();
    res.emit('close');
  };
  socket.once('close', gone);
  res.once('close', () => socket.removeListener('close', gone));
}
