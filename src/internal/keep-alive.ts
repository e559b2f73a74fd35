/**
 * How long an idle connection is reused, for the client's Agent and the gateway's upstream one. A request
 * sent on a connection as the server closes it fails, and a paid one is never sent again: so a connection
 * is let go well before the server would close it.
 * - The server's `Keep-Alive: timeout=N` hint: reused up to N less 4 s (node's and Apache's 5 s: 1 s, on
 *   a precise timer; past 1 s undici's timer may fire up to 1 s late, and a loaded machine's later still).
 * - At most 30 s, whatever the hint (`router serve`'s 65 s: 30 s).
 * - No hint: 1 s. Servers that say nothing close sooner than undici's 4 s assumes: gunicorn after 2 s,
 *   uvicorn after 5 s. The gateway halves it for an origin whose server closed a connection first
 *   (src/emulator/providers/origin-pools.ts).
 */
export const KEEP_ALIVE = { keepAliveTimeout: 1_000, keepAliveTimeoutThreshold: 4_000, keepAliveMaxTimeout: 30_000 } as const;
