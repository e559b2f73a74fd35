/**
 * An MCP server over stdio, run as a tool command is: in a session and process group of its own (the
 * terminal's Ctrl-C, its /dev/tty and its keys are not the server's), and ended as a whole group. The
 * SDK's transport ends only the process it started: a wrapper's program (`npx …`, `sh -c '…'`) outlived
 * it, and held router's pipes open, so that router never exited.
 */
import type { ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { endGroup, signalGroup } from '../internal/process-group.js';
import { atExit } from '../internal/exit-hooks.js';
import { toolEnv } from './tool-env.js';

/** The longest message taken from a server (a result is cut at 1 MiB anyway; all results of a chat keep 64 MiB). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export interface StdioServer {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** What the server writes on stderr, as it comes. */
  onStderr?: (chunk: Buffer) => void;
  /** The caller's: once it is aborted, closing ends the group at once. */
  signal?: AbortSignal;
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Why router stopped reading the server, when it did (a message past MAX_MESSAGE_BYTES). */
  refused?: string;
  private child?: ChildProcess;
  /** Settles when the server's first process has exited. */
  private exited: Promise<void> = Promise.resolve();
  private gone = false;
  private line: Buffer[] = [];
  private lineBytes = 0;
  private forget = () => {};

  private readonly server: Omit<StdioServer, 'env'>;
  // Private (#): a program that logs its tools (util.inspect, a logger's JSON) never prints the environment given.
  readonly #env: Record<string, string>;

  constructor({ env, ...server }: StdioServer) {
    this.server = server;
    this.#env = env;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    const [{ spawn }, { deserializeMessage }, { getDefaultEnvironment }] = await Promise.all([import('node:child_process'), import('@modelcontextprotocol/sdk/shared/stdio.js'), import('@modelcontextprotocol/sdk/client/stdio.js')]);
    // As the SDK's transport: HOME, LOGNAME, PATH, SHELL, TERM and USER under what is given; whatever
    // is given, never router's key variables nor a key this process's clients send (a program's `process.env`).
    const env = toolEnv({ ...getDefaultEnvironment(), ...this.#env });
    const child = spawn(this.server.command, this.server.args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => {
      this.gone = true;
      resolve();
    }));
    child.stdout!.on('data', (chunk: Buffer) => this.read(chunk, deserializeMessage));
    child.stderr!.on('data', (chunk: Buffer) => this.server.onStderr?.(chunk));
    for (const s of [child.stdin!, child.stdout!, child.stderr!]) s.on('error', (e: Error) => this.onerror?.(e));
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      // Not started (not found, not runnable): nothing to end.
      child.once('error', (e) => {
        if (!child.pid) this.child = undefined;
        reject(e);
      });
    });
    // Router ending otherwise (a plain kill, Ctrl-C's exit) ends the server's group: it may ignore EOF and SIGTERM.
    this.forget = atExit(() => signalGroup(child.pid, 'SIGKILL'));
    child.once('close', () => {
      if (this.child === child) this.child = undefined;
      this.forget();
      this.onclose?.();
    });
  }

  /**
   * Each message in a microtask of its own, in order: the SDK handles a notification a microtask
   * later and a response at once, so a call's last progress notification read together with its
   * answer came after the call had ended and was dropped.
   */
  private dispatched = Promise.resolve();
  private dispatch(text: string, parse: (line: string) => JSONRPCMessage): void {
    this.dispatched = this.dispatched.then(() => {
      try {
        this.onmessage?.(parse(text));
      } catch (err) {
        this.onerror?.(err as Error);
      }
    });
  }

  /** Messages are lines of JSON; a line that is none (a server logging on stdout) is an error said and passed over. */
  private read(chunk: Buffer, parse: (line: string) => JSONRPCMessage): void {
    // Refused once: what else comes is not read, and the server is being closed already.
    if (this.refused) return;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10)) {
      const text = Buffer.concat([...this.line, chunk.subarray(0, at)]).toString('utf8').replace(/\r$/, '');
      this.line = [];
      this.lineBytes = 0;
      chunk = chunk.subarray(at + 1);
      if (text.trim()) this.dispatch(text, parse);
    }
    this.lineBytes += chunk.length;
    if (chunk.length) this.line.push(chunk);
    if (this.lineBytes > MAX_MESSAGE_BYTES) {
      this.refused = `it sent a message of more than ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB`;
      this.line = [];
      void this.close();
    }
  }

  /** Settles once the message is taken; fails if the server ends first (it would never drain: a send without end). */
  send(message: JSONRPCMessage): Promise<void> {
    const child = this.child;
    const stdin = child?.stdin;
    if (!child || !stdin?.writable || this.gone) return Promise.reject(new Error('Not connected'));
    if (stdin.write(`${JSON.stringify(message)}\n`)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const settle = (err?: Error) => {
        stdin.off('drain', drained);
        stdin.off('close', ended);
        child.off('exit', ended);
        if (err) reject(err);
        else resolve();
      };
      const drained = () => settle();
      // Its stdin closed (it died: EPIPE), or its first process ended while another of its group holds the pipe unread.
      // Coded as the SDK's closed connection (-32000): a server that died at start is said the same either way.
      const ended = () => settle(Object.assign(new Error('the MCP server ended before it read the whole message'), { code: -32000 }));
      stdin.once('drain', drained);
      stdin.once('close', ended);
      child.once('exit', ended);
    });
  }

  /**
   * Closes the server's stdin, then ends its group: SIGTERM 2 s later if its first process still runs, SIGKILL 2 s after
   * that. Once the caller's signal is aborted, SIGTERM at once (as a tool command's on abort): the caller gave up.
   */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (!this.server.signal?.aborted) {
      child.stdin?.end();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.exited, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
      clearTimeout(timer);
    }
    // What the server started may outlive it and hold its pipes open: ended too.
    await endGroup(child.pid);
    [child.stdout, child.stderr].forEach((s) => s?.destroy());
    this.forget();
  }
}
