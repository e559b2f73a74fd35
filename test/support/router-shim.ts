import { chmodSync, createWriteStream, existsSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { captureMain } from './cli-env.js';
import { BIN } from '../helpers.js';

/**
 * A `router` on PATH for shell scripts (the README's and --help's examples) that runs `main()` in
 * this process instead of starting one. The script, made of bash builtins only (a process start
 * costs more than most runs), sends its pid, folder, arguments and environment over a local socket;
 * this process writes its stdout and stderr through /proc/PID/fd (a stdin other than
 * /dev/null comes in a file), and answers the exit code. `router serve`, and any run with ROUTER_SHIM_SPAWN=1 in its environment, start
 * the built binary instead.
 */
export interface RouterShim {
  /** The number of runs made in this process, and by the binary. */
  counts(): { inProcess: number; spawned: number };
  close(): Promise<void>;
}

function shimScript(port: number, spool: string): string {
  return `#!/bin/bash
if [ "$1" = serve ] || [ "$ROUTER_SHIM_SPAWN" = 1 ]; then printf x >> ${JSON.stringify(join(spool, 'spawned'))}; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"; fi
in=
if [ -p /dev/stdin ] || [ -f /dev/stdin ]; then in=${JSON.stringify(spool)}/$$.in; cat > "$in"; fi
exec 3<>/dev/tcp/127.0.0.1/${port}
{ printf '%s\\0' "$$" "$PWD" "$in" "$#" "$@"; for v in $(compgen -e); do printf '%s=%s\\0' "$v" "\${!v}"; done; printf '\\0'; } >&3
read -r code <&3
exit "$code"
`;
}

interface Call {
  pid: string;
  cwd: string;
  /** The file the script saved its stdin in (a pipe's or a file's), or none (/dev/null). */
  input: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** The fields a script sent: pid, folder, stdin file, argument count, arguments, NAME=value pairs, an empty field. */
function parseCall(fields: string[]): Call | undefined {
  if (fields.length < 5) return undefined;
  const argc = Number(fields[3]);
  // The last field of a split is what follows the last NUL: the ending empty field is the one before.
  const end = fields.indexOf('', 4 + argc);
  if (end < 0 || end === fields.length - 1) return undefined;
  const env: NodeJS.ProcessEnv = {};
  for (const pair of fields.slice(4 + argc, end)) env[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
  return { pid: fields[0]!, cwd: fields[1]!, input: fields[2]!, args: fields.slice(4, 4 + argc), env };
}

/** Writes to the script's own stdout or stderr (a file, a pipe), as its process would have. */
async function writeTo(path: string, bytes: Buffer): Promise<void> {
  if (bytes.length === 0) return;
  const out = createWriteStream(path, { flags: 'a' });
  out.on('error', () => {});
  out.end(bytes);
  await finished(out).catch(() => {});
}

/**
 * ROUTER_SHIM_TERMINAL=COLUMNS: a run whose stdout is an example's own output file (`ex.N.out`, not a pipe into
 * another command or a $(…)) is taken as one on a terminal that wide, stderr too.
 */
function terminalOf(call: Call): number | undefined {
  const columns = Number(call.env.ROUTER_SHIM_TERMINAL);
  if (!columns) return undefined;
  try {
    return /\/ex\.\d+\.out$/.test(readlinkSync(`/proc/${call.pid}/fd/1`)) ? columns : undefined;
  } catch {
    return undefined;
  }
}

/** One run of `router ARGS` as the script asked; one at a time, since it changes the working folder. */
async function run(call: Call, input: Buffer): Promise<number> {
  let ran: { code: number; out: Buffer; err: Buffer };
  try {
    ran = await captureMain(call.args, { input, env: call.env, cwd: call.cwd, terminal: terminalOf(call) });
  } catch (e) {
    ran = { code: 70, out: Buffer.alloc(0), err: Buffer.from(String((e as Error).stack ?? e)) };
  }
  const { code, out, err } = ran;
  await writeTo(`/proc/${call.pid}/fd/1`, out);
  await writeTo(`/proc/${call.pid}/fd/2`, err);
  return code;
}

/** Writes `router` into `binDir`; `spool` is a folder of its own for the scripts' stdin and a count of the binary's runs. */
export async function startRouterShim(binDir: string, spool: string): Promise<RouterShim> {
  let queue: Promise<unknown> = Promise.resolve();
  let inProcess = 0;
  const serve = (socket: Socket) => {
    const sent: Buffer[] = [];
    socket.on('error', () => {});
    socket.on('data', async (c: Buffer) => {
      sent.push(c);
      const call = parseCall(Buffer.concat(sent).toString('utf8').split('\0'));
      if (!call) return;
      socket.removeAllListeners('data');
      const input = call.input ? readFileSync(call.input) : Buffer.alloc(0);
      if (call.input) rmSync(call.input);
      queue = queue.then(async () => {
        inProcess++;
        socket.end(`${await run(call, input)}\n`);
      });
    });
  };
  const server: Server = createServer(serve);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  writeFileSync(join(binDir, 'router'), shimScript((server.address() as { port: number }).port, spool));
  chmodSync(join(binDir, 'router'), 0o755);
  return {
    counts: () => {
      const log = join(spool, 'spawned');
      return { inProcess, spawned: existsSync(log) ? readFileSync(log, 'utf8').length : 0 };
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
