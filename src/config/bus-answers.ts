/**
 * The keychain binding connects to the D-Bus session on the calling thread, before any of its async
 * calls: a bus whose socket accepts and then says nothing (a hung dbus-daemon, a stale socket of a
 * session whose daemon is stopped) held that thread for ever, so Ctrl-C, SIGTERM and `timeout` did
 * nothing. So the bus is asked first, on the event loop: a bus that has not begun its handshake
 * within BUS_ANSWER_MS is no keychain.
 */
import { connect } from 'node:net';
import { userInfo } from 'node:os';

export const BUS_ANSWER_MS = 3_000;

/** The socket of a `unix:path=` or `unix:abstract=` address, the first of a `;`-separated list; else undefined. */
export function busSocket(address: string | undefined): string | undefined {
  const first = (address ?? '').split(';')[0] ?? '';
  const m = /^unix:(.*)$/.exec(first.trim());
  if (!m) return undefined;
  const parts = new Map((m[1] ?? '').split(',').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const));
  const unescape = (v: string) => v.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  const path = parts.get('path');
  if (path) return unescape(path);
  const abstract = parts.get('abstract');
  return abstract ? `\0${unescape(abstract)}` : undefined;
}

/**
 * Why the session bus at `address` is no keychain, or undefined when it answers (or is not one this
 * can ask: then the binding's own connect says). A socket that is not there is left to the binding,
 * whose words for it users know. Ends early, as undefined, when `signal` aborts.
 */
export function busSilence(address: string | undefined, signal?: AbortSignal, ms = BUS_ANSWER_MS): Promise<string | undefined> {
  const socket = busSocket(address);
  if (socket === undefined) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const s = connect(socket);
    const done = (why: string | undefined) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      s.destroy();
      resolve(why);
    };
    const onAbort = () => done(undefined);
    const timer = setTimeout(() => done(`the D-Bus session at DBUS_SESSION_BUS_ADDRESS did not answer within ${BUS_ANSWER_MS / 1000} s`), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    s.on('connect', () => {
      let uid = '0';
      try {
        uid = String(userInfo().uid);
      } catch {
        /* no user database entry: the uid is only the handshake's first words */
      }
      s.write(`\0AUTH EXTERNAL ${Buffer.from(uid).toString('hex')}\r\n`);
    });
    // Any line back (OK, REJECTED, an error) is a bus that answers.
    s.on('data', () => done(undefined));
    s.on('error', () => done(undefined));
    s.on('close', () => done(undefined));
  });
}
