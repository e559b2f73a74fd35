import { PassThrough, Readable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import type { Streams } from '../../src/cli/io/io.js';

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface InProcessOptions {
  env?: Record<string, string | undefined>;
  input?: string | Buffer;
  /** Pretend these streams are terminals (gh's iostreams.Test()). */
  tty?: { stdin?: boolean; stdout?: boolean; stderr?: boolean };
  columns?: number;
}

/** Test streams: stdin from a string, stdout and stderr collected; TTY facts as asked. */
export function testStreams(opts: InProcessOptions = {}): { streams: Streams; stdout: () => string; stderr: () => string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const stdout = Object.assign(new PassThrough(), { columns: opts.columns ?? 80 });
  const stderr = new PassThrough();
  stdout.on('data', (c: Buffer) => out.push(c));
  stderr.on('data', (c: Buffer) => err.push(c));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '', FORCE_COLOR: undefined, ...opts.env })) if (v !== undefined) env[k] = v;
  return {
    streams: { stdin: Readable.from([Buffer.from(opts.input ?? '')]), stdout, stderr, env, tty: opts.tty ?? { stdin: false, stdout: false, stderr: false } },
    stdout: () => Buffer.concat(out).toString('utf8'),
    stderr: () => Buffer.concat(err).toString('utf8'),
  };
}

/** Runs `router ARGS` in this process: the same code path as the binary, without a process start. */
export async function runInProcess(args: string[], opts: InProcessOptions = {}): Promise<InProcessResult> {
  const t = testStreams(opts);
  const code = await main(['node', 'router', ...args], t.streams);
  await new Promise((r) => setImmediate(r));
  return { code, stdout: t.stdout(), stderr: t.stderr() };
}
