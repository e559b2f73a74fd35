/** `router serve`: the local emulator of the whole API, until Ctrl-C or SIGTERM. */
import { stateHome } from '../../config/state-dir.js';
import type { RunContext } from '../run.js';
import { defineCommand } from '../define.js';
import type { FlagValues } from '../flags.js';
import { collect, integerIn } from '../options.js';
import { jsonFlags } from '../setup-flags.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import { isBlank } from '../../internal/blank.js';

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return `${stateHome(env)}/emulator`;
}

const FLAGS = {
  port: { flags: '--port <n>', help: 'port, 0 for any free one', parse: integerIn(0, 65535), default: 8080 },
  host: { flags: '--host <addr>', help: 'address to listen on', default: '127.0.0.1' },
  state: { flags: '--state <dir>', help: 'state folder (default: $XDG_STATE_HOME/router/emulator)' },
  fault: { flags: '--fault <spec>', help: 'inject a fault, repeatable: 429,retry_after=1 | 503,times=2 | slow,delay_ms=500 | cut,after=3 | error-chunk | malformed | reset | lost', parse: collect },
  flavor: { flags: '--flavor <shape>', help: 'shape of the batch resource: spec (api.md: /v1/batches, listed) or deployed (as the real service runs: /beta/batches, no listing, results only when completed)', choices: ['spec', 'deployed'] as const, default: 'spec' },
  batchDelayMs: { flags: '--batch-delay-ms <ms>', help: 'pause of the batch engine before each request', parse: integerIn(0, 600_000), default: 20 },
  ...jsonFlags('print {api_root, api_key, management_key, operator_key, state_dir} as one JSON line'),
} as const;

export const serve = defineCommand({
  name: 'serve',
  summary: 'run the local emulator of the whole API',
  description: 'Run the local emulator of the service on 127.0.0.1. It prints its API root and ready-to-use keys; state (keys, balances, batches) persists in --state.',
  flags: FLAGS,
  examples: ['router serve --port 8080', 'router serve --port 0 --state ./state --json', 'router serve --fault "503,times=2"', 'router serve --flavor deployed'],
  run: runServe,
});

/** Starts the emulator, prints where it is and its keys, and runs until Ctrl-C or SIGTERM. */
async function runServe({ io, opts, signal }: RunContext<FlagValues<typeof FLAGS>>): Promise<void> {
  const { startEmulator } = await import('../../emulator/server.js');
  const { FaultSpecError, parseFault } = await import('../../emulator/faults.js');
  for (const f of opts.fault ?? []) {
    try {
      parseFault(f);
    } catch (err) {
      if (err instanceof FaultSpecError) throw usage(`--fault: ${err.message}`);
      throw err;
    }
  }
  if (opts.state !== undefined && isBlank(opts.state)) throw usage('--state: the path is empty');
  const stateDir = opts.state ?? defaultStateDir(io.env);
  const { statSync } = await import('node:fs');
  const st = statSync(stateDir, { throwIfNoEntry: false });
  if (st && !st.isDirectory()) throw usage(`--state ${stateDir} is a file, not a folder`);
  if (isBlank(opts.host)) throw usage('--host: the address is empty (127.0.0.1 is the default)');
  const release = await holdState(stateDir);
  const emu = await startEmulator({ stateDir, port: opts.port, host: opts.host, faults: opts.fault, batchDelayMs: opts.batchDelayMs, flavor: opts.flavor }).catch((err: unknown) => {
    release();
    throw badHost(err, opts.host) ?? err;
  });
  if (!['127.0.0.1', 'localhost', '::1'].includes(opts.host) && !opts.host.startsWith('127.')) {
    io.note(`warning: listening on ${opts.host}: the emulator is a test double, not a secure server; anyone who can reach it can use its keys`);
  }
  const { apiKey, managementKey } = emu.store.firstKeys();
  const operatorKey = emu.store.operatorKey();
  if (opts.json) {
    io.jsonl({ api_root: emu.apiRoot, api_key: apiKey, management_key: managementKey, operator_key: operatorKey, state_dir: stateDir, pid: process.pid });
  } else {
    io.out(
      [
        `router emulator listening on ${emu.apiRoot}${opts.flavor === 'deployed' ? ' (deployed flavour: batches at /beta/batches, no listing)' : ''}`,
        `  API key:        ${apiKey}`,
        `  management key: ${managementKey}`,
        `  operator key:   ${operatorKey}  (emulator-only routes: clock, workspaces, batch pace)`,
        `  state:          ${stateDir}`,
        '',
        'Paste into a shell (speech and decisions need the management key):',
        `  export ROUTER_API_ROOT=${emu.apiRoot} ROUTER_API_KEY=${apiKey} ROUTER_MANAGEMENT_KEY=${managementKey}`,
        '  router chat --model local/lorem "write 12 words"',
        '',
      ].join('\n'),
    );
  }
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    signal.addEventListener('abort', stop, { once: true });
    process.once('SIGTERM', stop);
  });
  try {
    await emu.close();
  } finally {
    release();
  }
}

/** A --host that names no address of this machine: the user's to fix (exit 2), not a failure. */
function badHost(err: unknown, host: string): CliError | undefined {
  const code = (err as { code?: unknown })?.code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL') return usage(`--host ${host}: no such host name or address`);
  if (code === 'EADDRNOTAVAIL') return usage(`--host ${host}: not an address of this machine`);
  return undefined;
}

/**
 * One emulator per state folder: a second would answer from its own copy of the state and save it
 * over the first's (batches created on one gone from both). A lock left by a killed one is taken over.
 */
async function holdState(stateDir: string): Promise<() => void> {
  const { join } = await import('node:path');
  const { makeDir } = await import('../../internal/make-dir.js');
  const { holdLock } = await import('../../internal/file-lock.js');
  makeDir(stateDir);
  return holdLock(join(stateDir, 'serve.lock'), (holder) => new CliError(`--state ${stateDir} is in use by another router serve (process ${holder}): stop it, or give another --state`, EXIT.FAILURE));
}
