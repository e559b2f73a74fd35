/** `router serve`: the local emulator of the whole API, until Ctrl-C or SIGTERM. */
import { stateHome } from '../../config/state-dir.js';
import type { RunContext } from '../run.js';
import { defineCommand } from '../define.js';
import type { FlagValues } from '../flags/flags.js';
import { collect, integerIn, numberIn } from '../flags/options.js';
import { jsonFlags } from '../flags/setup-flags.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import { isBlank } from '../../internal/blank.js';
import { counted } from '../../internal/counted.js';
import { takeSignal } from '../signals.js';
import { exitSoFar, failsWith } from '../io/exit-so-far.js';
import { utf8Text } from '../io/utf8.js';
import type { GatewayConfig } from '../../emulator/providers/config.js';

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return `${stateHome(env)}/emulator`;
}

const FLAGS = {
  port: { flags: '--port <n>', help: 'port, 0 for any free one', parse: integerIn(0, 65535), default: 8080 },
  host: { flags: '--host <addr>', help: 'address to listen on', default: '127.0.0.1' },
  state: { flags: '--state <dir>', help: 'state folder (default: $XDG_STATE_HOME/router/emulator)' },
  fault: { flags: '--fault <spec>', help: 'inject a fault, repeatable: 429,retry_after=1 | 503,times=2 | slow,delay_ms=500 | cut,after=3 | error-chunk | malformed | reset | lost', parse: collect },
  providers: { flags: '--providers <file>', help: 'serve upstream models too, as a YAML file lists them (docs/gateway.md); keys from the environment' },
  record: { flags: '--record <dir>', help: 'keep every upstream exchange as a cassette file in <dir>' },
  replay: { flags: '--replay <dir>', help: 'answer upstream models from the cassettes in <dir>, no upstream asked' },
  checkDrift: { flags: '--check-drift <dir>', help: 'send the requests recorded in <dir> to their upstreams again, say whose answers changed shape, and exit (1 when any did, 8 when a provider is down)' },
  recordMissing: { flags: '--record-missing', help: 'with --replay: ask the upstream for what no cassette holds, and keep it' },
  replayTiming: { flags: '--replay-timing <ratio>', help: 'with --replay: the recorded waits (first chunk, between chunks, whole answers) times <ratio>: 1 as recorded (default), 0.5 half as long, 0 none', parse: numberIn(0, 1000) },
  flavor: { flags: '--flavor <shape>', help: 'shape of the service: spec (api.md: /v1/batches, listed) or deployed (as the real service runs: /beta/batches, no listing, results only when completed; decisions also at /v1/systemone, with JSON instructions)', choices: ['spec', 'deployed'] as const, default: 'spec' },
  batchDelayMs: { flags: '--batch-delay-ms <ms>', help: 'pause of the batch engine before each request', parse: integerIn(0, 600_000), default: 20 },
  ...jsonFlags('print {api_root, api_key, management_key, operator_key, state_dir, pid} as one JSON line'),
} as const;

export const serve = defineCommand({
  name: 'serve',
  jsonFields: ['api_root', 'api_key', 'management_key', 'operator_key', 'state_dir', 'pid'],
  summary: 'run the local emulator of the whole API',
  description: 'Run the local emulator of the service on 127.0.0.1. It prints its API root and ready-to-use keys; state (keys, balances, batches) persists in --state. With --providers it is also a gateway to real OpenAI-compatible servers (Ollama, vLLM, OpenAI), with fallback, record and replay: docs/gateway.md.',
  flags: FLAGS,
  // The emulator reads no kept file (test/unit/architecture.test.ts checks it imports no reader of one).
  readsNoKeptFiles: true,
  examples: ['router serve --port 8080', 'router serve --port 0 --state ./state --json', 'router serve --fault "503,times=2"', 'router serve --flavor deployed'],
  run: runServe,
});

/** Starts the emulator, prints where it is and its keys, and runs until Ctrl-C or SIGTERM. */
async function runServe({ io, opts, signal }: RunContext<FlagValues<typeof FLAGS>>): Promise<void> {
  const { startEmulator } = await import('../../emulator/server.js');
  const { FaultSpecError, parseFault } = await import('../../emulator/http/faults.js');
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
  const gateway = await gatewayOptions(opts, io.env, (line) => io.note(line));
  if (opts.checkDrift !== undefined) return checkDrift(io, opts.checkDrift, gateway);
  await writableFolder('--state', stateDir, 0o700);
  const release = await holdState(stateDir, (said) => {
    // Two serves must never work on one state: this one stops at once, as a kill -9 would (nothing more written).
    io.note(`error: ${said}; stopping, so two do not work on one state`);
    process.exit(EXIT.FAILURE);
  });
  const emu = await startEmulator({ stateDir, port: opts.port, host: opts.host, faults: opts.fault, batchDelayMs: opts.batchDelayMs, gateway, flavor: opts.flavor }).catch((err: unknown) => {
    release();
    // A cassette edited wrong is a mistake of the folder given: said as one, exit 2.
    if ((err as Error)?.name === 'CassetteFileError') throw usage(`--${opts.record !== undefined ? 'record' : 'replay'} ${opts.record ?? opts.replay}: ${(err as Error).message}`);
    throw badHost(err, opts.host) ?? err;
  });
  if (!['127.0.0.1', 'localhost', '::1'].includes(opts.host) && !opts.host.startsWith('127.')) {
    io.note(`warning: listening on ${opts.host}: the emulator is a test double, not a secure server; anyone who can reach it can use its keys`);
  }
  if (gateway) {
    const served = gateway.config.providers.map((p) => `${p.name} (${p.models.map((m) => m.id).join(', ')})`).join('; ');
    const cassettes = gateway.cassettes ? `; ${gateway.cassettes.mode === 'record' ? 'recording to' : gateway.cassettes.mode === 'replay' ? 'replaying from' : 'replaying, recording what is missing, in'} ${gateway.cassettes.dir}` : '';
    io.note(`gateway: ${served}${gateway.config.localModels ? '; the local/… models too' : ''}${cassettes}`);
  }
  const { apiKey, managementKey } = emu.store.firstKeys();
  const operatorKey = emu.store.operatorKey();
  if (opts.json) {
    io.jsonl({ api_root: emu.apiRoot, api_key: apiKey, management_key: managementKey, operator_key: operatorKey, state_dir: stateDir, pid: process.pid });
    // --jq runs once a command is done, and this one runs until stopped: its line is wanted now. A filter
    // that fails (or a stdout that is gone) ends the command: the emulator stops and --state is let go,
    // else the process said its error and went on listening until killed.
    await io.flushJq().catch(async (err: unknown) => {
      try {
        await emu.close();
      } finally {
        release();
      }
      throw err;
    });
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
        ...firstTry(gateway?.config),
        '',
      ].join('\n'),
    );
  }
  let hungUp = false;
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    const hangUp = () => ((hungUp = true), resolve());
    signal.addEventListener('abort', stop, { once: true });
    takeSignal('SIGTERM', stop);
    // The terminal closing (or `kill -HUP`): the same clean close as SIGTERM's, then exit 129 as any command.
    takeSignal('SIGHUP', hangUp);
  });
  try {
    await emu.close();
  } finally {
    release();
  }
  // Stopped cleanly either way; Ctrl-C is the usual way to stop it, said as a stop, with the exit code of
  // an interrupt as in every command (130); SIGTERM is serve's stop request (exit 0), SIGHUP a hang-up
  // (exit 129, nothing said: the terminal may be gone).
  if (signal.aborted) {
    io.note('router serve: stopped (Ctrl-C)');
    throw new CliError('stopped', EXIT.INTERRUPTED, undefined, []);
  }
  if (hungUp) throw new CliError('hung up', EXIT.HANGUP, undefined, []);
}

/** The command printed to try it: a model of the gateway's, whose operator came for those (and may have turned the fake ones off). */
function firstTry(config: GatewayConfig | undefined): string[] {
  const chat = config?.providers.flatMap((p) => p.models).find((m) => m.kind === undefined);
  if (chat) return [`  router chat --model ${chat.id} "hello"`];
  return !config || config.localModels ? ['  router chat --model local/lorem "write 12 words"'] : [];
}

/**
 * `--check-drift DIR`: one line a cassette on stdout (`same`, `drift` and its changes, `down`, `error`); exit 1 when any
 * drifted or could not be asked, else 8 when a provider is down (nothing known of its drift), else 0. A cassette replay would
 * refuse (its provider not in the file, say) is refused as replay does: exit 2, nothing asked.
 */
async function checkDrift(io: RunContext<FlagValues<typeof FLAGS>>['io'], dir: string, gateway: Awaited<ReturnType<typeof gatewayOptions>>): Promise<void> {
  if (!gateway) throw usage('--check-drift needs --providers FILE: the upstreams to ask again');
  const { statSync } = await import('node:fs');
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw usage(`--check-drift ${dir}: no such folder`);
  const { checkDriftAll } = await import('../../emulator/providers/drift.js');
  const reports = await checkDriftAll(dir, gateway.config, (r) => {
    // `--check-drift DIR | head`: a reader gone after a drift line ends it with exit 1 all the same.
    if ((r.error && !r.down) || r.changes.length) failsWith(io.stdout, EXIT.FAILURE);
    else if (r.down && exitSoFar(io.stdout) !== EXIT.FAILURE) failsWith(io.stdout, EXIT.NETWORK);
    if (r.error) io.out(`${r.down ? 'down ' : 'error'}  ${r.file}: ${r.error}\n`);
    else io.out(`${r.changes.length ? 'drift' : 'same '}  ${r.file}\n${r.changes.map((c) => `  ${c}\n`).join('')}`);
  }).catch((err: unknown) => {
    throw (err as Error)?.name === 'CassetteFileError' ? usage(`--check-drift ${dir}: ${(err as Error).message}`) : err;
  });
  // A folder with no cassette (a wrong path, a recording never made) checked nothing: no pass.
  if (!reports.length) throw usage(`--check-drift ${dir}: no cassettes in it (router serve --record ${dir} writes them): nothing to check`);
  const changed = reports.filter((r) => (r.error && !r.down) || r.changes.length).length;
  const down = reports.filter((r) => r.down).length;
  const downNote = down ? `; ${down} not asked: the provider is down (refused or timed out)` : '';
  const of = (n: number) => `${n} of ${counted(reports.length, 'recorded answer')}`;
  if (changed) throw new CliError(`${of(changed)} changed shape or could not be asked again${downNote}`, EXIT.FAILURE);
  // Said as checked: when every one was down, there are no others of the same shape to speak of.
  const same = reports.length - down;
  const rest = same ? `; the other ${same}, the same shape` : ': none was checked';
  if (down) throw new CliError(`${down === reports.length && down > 1 ? `all ${counted(down, 'recorded answer')}` : of(down)} not asked again: the provider is down (refused or timed out)${rest}`, EXIT.NETWORK);
  io.note(`${counted(reports.length, 'recorded answer')}, the same shape`);
}

/** The gateway's settings from --providers, --record, --replay and --record-missing; nothing asked of an upstream yet. */
async function gatewayOptions(opts: FlagValues<typeof FLAGS>, env: NodeJS.ProcessEnv, note: (line: string) => void) {
  if (opts.record !== undefined && opts.replay !== undefined) throw usage('--record and --replay go one at a time (--replay DIR --record-missing records what is missing)');
  if (opts.recordMissing && opts.replay === undefined) throw usage('--record-missing goes with --replay DIR');
  if (opts.replayTiming !== undefined && opts.replay === undefined) throw usage('--replay-timing goes with --replay DIR');
  const dir = opts.record ?? opts.replay;
  if (opts.checkDrift !== undefined && dir !== undefined) throw usage('--check-drift goes without --record and --replay');
  if (dir !== undefined && isBlank(dir)) throw usage(`--${opts.record !== undefined ? 'record' : 'replay'}: the path is empty`);
  if (opts.providers === undefined) {
    if (dir !== undefined) throw usage(`--${opts.record !== undefined ? 'record' : 'replay'} needs --providers FILE: cassettes hold upstream exchanges`);
    return undefined;
  }
  const { statSync } = await import('node:fs');
  const { namedFileLine, readNamedFile, unreadableWhy } = await import('../../internal/named-input.js');
  const { MAX_LOCAL_FILE_BYTES } = await import('../../internal/local-file.js');
  const flag = opts.record !== undefined ? 'record' : 'replay';
  const found = dir === undefined ? undefined : statSync(dir, { throwIfNoEntry: false });
  if (found && !found.isDirectory()) throw usage(`--${flag} ${dir} is a file, not a folder`);
  // --record-missing makes its folder as --record does: a first run records every request.
  if (opts.replay !== undefined && !found && !opts.recordMissing) throw usage(`--replay ${opts.replay}: no such folder`);
  if (opts.record !== undefined || opts.recordMissing) await writableFolder(`--${flag}`, dir!, 0o777);
  let bytes: Buffer;
  try {
    bytes = await readNamedFile(opts.providers, MAX_LOCAL_FILE_BYTES, () => usage(`--providers ${opts.providers}: larger than ${MAX_LOCAL_FILE_BYTES / 1024 / 1024} MiB, far more than a providers file holds`));
  } catch (err) {
    if (err instanceof CliError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw usage(namedFileLine('--providers', opts.providers, code ? unreadableWhy(code) : (err as Error).message));
  }
  const text = utf8Text(bytes, `--providers ${opts.providers}`);
  const { parseProviders, ProvidersFileError } = await import('../../emulator/providers/config.js');
  try {
    const mode = opts.record !== undefined ? 'record' : opts.recordMissing ? 'replay-record' : 'replay';
    // Only a replay asks no upstream: there a provider's key may be missing (a CI run without secrets), and unsaid.
    const config = parseProviders(text, env, { warn: note, keys: dir !== undefined && mode === 'replay' ? 'unused' : 'required' });
    return { config, cassettes: dir === undefined ? undefined : { dir, mode, timing: opts.replayTiming } as const };
  } catch (err) {
    if (err instanceof ProvidersFileError) throw usage(`--providers ${opts.providers}: ${err.message}`);
    throw err;
  }
}

/**
 * A folder serve writes into (--state, --record, --replay with --record-missing), made and written once
 * at start: a place it cannot write (/proc, a read-only mount) is refused in one line, not met at the first
 * cassette or save. Made by makeDir: node 20's recursive mkdir spins for ever under /proc.
 */
async function writableFolder(flag: string, dir: string, mode: number): Promise<void> {
  const { makeDir } = await import('../../internal/make-dir.js');
  const { describeCode } = await import('../../internal/system-errors.js');
  const { unlinkSync, writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const probe = join(dir, `.router-write-check-${process.pid}`);
  const words = (err: unknown) => ((err as NodeJS.ErrnoException).code ? describeCode((err as NodeJS.ErrnoException).code!) : (err as Error).message);
  try {
    makeDir(dir, mode);
  } catch (err) {
    throw usage(`${flag} ${dir}: cannot make ${(err as NodeJS.ErrnoException).path ?? dir}: ${words(err)}`);
  }
  try {
    writeFileSync(probe, '');
    unlinkSync(probe);
  } catch (err) {
    throw usage(`${flag} ${dir}: cannot write there: ${words(err)}`);
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
async function holdState(stateDir: string, lost: (said: string) => void): Promise<() => void> {
  const { join } = await import('node:path');
  const { makeDir } = await import('../../internal/make-dir.js');
  const { holdLock } = await import('../../internal/file-lock.js');
  makeDir(stateDir);
  const lock = join(stateDir, 'serve.lock');
  // A lock naming this very process is stale: a restarted container's serve gets its killed one's pid
  // (often 1). A lock of this router says when its process started, and takeLock tells; one of an older one does not.
  const { readlinkSync, unlinkSync } = await import('node:fs');
  const { hostname } = await import('node:os');
  try {
    if (readlinkSync(lock) === String(process.pid)) unlinkSync(lock);
  } catch {
    // No lock, or not ours to read: holdLock says what it finds.
  }
  // A lock of another machine or process namespace is watched a few seconds: a killed one's is taken over.
  return holdLock(lock, (holder) =>
    holder.host || holder.elsewhere
      ? new CliError(`--state ${stateDir} is in use by a router serve ${holder.host ? `on ${holder.host} (process ${holder.pid})` : `in another process namespace on ${hostname()} (process ${holder.pid} there)`}: stop it, or give another --state; if none runs there, remove ${lock}`, EXIT.FAILURE)
      : new CliError(`--state ${stateDir} is in use by another router serve (process ${holder.pid}): stop it, or give another --state`, EXIT.FAILURE),
    (_, said) => lost(said),
  );
}
