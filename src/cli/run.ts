import type { Command } from './commander.js';
import { IO, processStreams, type GlobalFlags, type Streams } from './io/io.js';
import type { Connected, ConnectOptions } from './context.js';
import type { UsageRecord } from '../kit/spend/ledger.js';
import type { BudgetHold } from './spend/budget-hold.js';
import type { Settings, Source } from '../config/settings.js';
import { CliError, EXIT } from './exit-codes.js';
import { rootKey } from '../internal/api-root.js';
import { dieOfSigintAtExit, signalExitCode, stopOnSigint, stopOnSigterm, terminated } from './signals.js';
import { overriddenInUse, readsDefaultModel } from './flags/overridden-in-use.js';
import { hearingKeptProblems } from '../internal/kept-state.js';

/** What a run of `router` gets from outside: streams, environment, arguments; tests pass their own. */
export interface Runtime {
  streams: Streams;
  /** The user's arguments (without node and the script). */
  argv: string[];
  /** The client factory; the default builds one from the run's settings. */
  connect?: (io: IO, flags: GlobalFlags, settings: Settings, opts?: ConnectOptions) => Promise<Connected>;
  exitCode: number;
  /** Registered by `main`: takes Ctrl-C away from the default (kill) while a command runs. */
  interrupts: boolean;
  /** Commands under way: the process must not end quietly while one is. */
  running?: number;
  /** The whole command tree (for completions), from `main` without importing it. */
  fullProgram?: () => Promise<Command>;
}

export interface RunContext<O> {
  io: IO;
  flags: GlobalFlags;
  opts: O;
  cmd: Command;
  /** The user's arguments as typed, for options whose order matters. */
  argv: string[];
  env: NodeJS.ProcessEnv;
  /** Aborted on Ctrl-C. */
  signal: AbortSignal;
  /** The run's settings (flags > env > profile), read once on first use; each value with where it came from. */
  settings(): Promise<Settings>;
  /** The model the command names goes before the environment's and the profile's: its --model (typed, or its role's), else its conversation's. */
  useCommandModel(conversation?: { id: string; model?: string }): void;
  /** Builds the client from settings(); call it only after the command's own input is checked. */
  connect(opts?: ConnectOptions): Promise<Connected>;
  /** Calls are written down (ledger, conversations): connected, and neither --no-log nor the settings say no. */
  readonly logging: boolean;
  /** Writes one call to the local usage ledger (unless --no-log or the settings turn it off). */
  logUsage(record: Omit<UsageRecord, 'time' | 'profile' | 'command'>): void;
  /** What the command holds of the budgets (./spend/budget-hold.ts): lessened by each call logged, released when it ends or holds anew. */
  holdBudget(hold: BudgetHold): void;
  /** The answer of the call under way began, with this generation id: its hold keeps it (a kill leaves a line that can be reconciled). */
  answering(id: string, endpoint: string): void;
  /**
   * A note on the output as a whole (--usage): said once the command's output (and --jq's runs over it)
   * is written, so that on a shared terminal it comes after the answer; before any error line.
   */
  closingNote(text: string): void;
}

const runtimes = new WeakMap<Command, Runtime>();

export function attachRuntime(program: Command, runtime: Runtime): void {
  runtimes.set(program, runtime);
}

export function runtimeOf(cmd: Command): Runtime {
  let root = cmd;
  while (root.parent) root = root.parent;
  return runtimes.get(root) ?? { streams: processStreams(), argv: process.argv.slice(2), exitCode: 0, interrupts: false };
}

export function interrupted(): Error {
  return Object.assign(new Error('interrupted'), { name: 'AbortError' });
}

/**
 * Wraps a command implementation: builds the IO from the global flags, turns Ctrl-C into an abort,
 * and turns any failure into one `error:` line and the table's exit code.
 */
export function action<O, A extends unknown[] = []>(fn: (ctx: RunContext<O>, ...args: A) => Promise<void>, facts: CommandFacts = {}) {
  return async (...raw: unknown[]): Promise<void> => {
    const cmd = raw[raw.length - 1] as Command;
    const opts = raw[raw.length - 2] as O;
    takeBackOwnFlags(cmd, opts as Record<string, unknown>);
    const args = raw.slice(0, -2) as A;
    const runtime = runtimeOf(cmd);
    const flags = cmd.optsWithGlobals() as GlobalFlags;
    const io = new IO(flags, runtime.streams);
    const controller = new AbortController();
    io.interrupt = controller.signal;
    const [offSigint, offSigterm] = runtime.interrupts ? [stopOnSigint(() => controller.abort(interrupted())), stopOnSigterm(() => controller.abort(terminated()))] : [];
    let resolved: Promise<Settings> | undefined;
    let commandModel: { model: string; from: Source } | undefined;
    const settings = async (): Promise<Settings> => {
      resolved ??= import('../config/settings.js').then((m) => m.resolveSettings({ profile: flags.profile, apiRoot: flags.apiRoot }, io.env)).catch(async (e: unknown) => Promise.reject((await import('./flags/other-tools-words.js')).paramMeant(e, cmd.options.some((o) => o.long === '--param'), flags.profile)));
      const s = await resolved;
      // No note that the environment goes before the profile, nor a check, for a setting not used (a stale ROUTER_MODEL does not stop `router credits`).
      const model = commandModel ?? (readsDefaultModel(cmd) ? { model: s.model, from: s.from.model } : { model: undefined, from: undefined });
      const all = { ...s, model: model.model, from: { ...s.from, model: model.from }, overridden: overriddenInUse(s.overridden, cmd, !!commandModel) };
      return [all.model, all.speechModel, all.embedModel].every((m) => m?.includes('/') ?? true) ? all : (await import('./flags/model-alias.js')).settingsWithAliases(all, io.env);
    };
    const useCommandModel = (conversation?: { id: string; model?: string }) => {
      const { model, role } = opts as { model?: unknown; role?: unknown };
      const byRole = typeof role === 'string' && cmd.getOptionValueSource('model') !== 'cli';
      if (typeof model === 'string') commandModel = { model, from: byRole ? { kind: 'role', name: role } : { kind: 'flag', name: '--model' } };
      else if (conversation?.model !== undefined) commandModel = { model: conversation.model, from: { kind: 'conversation', id: conversation.id } };
      else commandModel = undefined;
    };
    let connected: Connected | undefined;
    let connectedWith: ConnectOptions | undefined;
    const connect = async (o?: ConnectOptions) => {
      const s = await settings();
      connected = runtime.connect ? await runtime.connect(io, flags, s, o) : await (await import('./context.js')).connect(io, flags, s, o);
      connectedWith = o;
      return connected;
    };
    const names: string[] = [];
    for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
    const logging = () => flags.log !== false && !!connected?.settings.log;
    let hold: BudgetHold | undefined;
    const holdBudget = (next: BudgetHold) => {
      if (hold !== next) hold?.release();
      hold = next;
    };
    let toldLedger = false;
    const logUsage = (record: Omit<UsageRecord, 'time' | 'profile' | 'command'>) => {
      if (!logging()) return;
      if (!ledger) throw new Error(`router ${names.join(' ')} writes to the usage ledger, and its definition does not say logsUsage (this is a bug; please report it)`);
      // Under a budget a call whose answer said no cost (a stream cut, an error mid-stream) may still have been charged: its bound counts until `usage --reconcile` settles it.
      if (hold) record = hold.priced(record);
      const problem = ledger.appendUsage(runtime.streams.env, { time: new Date().toISOString(), profile: connected!.settings.profile, command: names.join(' '), api_root: rootKey(connected!.client.core.apiRoot), ...record });
      // Said whether piped or not (once a command: a loop of calls has one ledger), as `usage` will miss the call;
      // under a budget the spend would go unseen: held against the budgets instead.
      if (problem) {
        const held = hold?.unrecorded(record.cost);
        if (held || !toldLedger) io.note(`warning: ${problem}${held ? ': its cost is held against the budgets for a day instead' : ': router usage will not count this call'}`);
        toldLedger = true;
      }
      // Once in the ledger a cost is counted there: no longer held (what is left of the hold covers the command's further calls).
      // A batch's bound was moved to a hold of its own when it was made (toBatch, holdShard), which its record removes.
      else if (!record.batch_id) hold?.spent(record.cost);
    };
    // The ledger module is small and loaded with the command, never for --help.
    const ledger = facts.logsUsage ? await import('../kit/spend/ledger.js') : undefined;
    runtime.running = (runtime.running ?? 0) + 1;
    const closing: string[] = [];
    try {
      await shapeJson(names.join(' '), facts.jsonFields, opts as JsonOpts, io, runtime.argv);
      const ctx: RunContext<O> = {
        io,
        flags,
        opts,
        cmd,
        argv: runtime.argv,
        env: runtime.streams.env,
        signal: controller.signal,
        settings,
        useCommandModel,
        connect,
        logUsage,
        holdBudget,
        answering: (id, endpoint) => hold?.answering(id, endpoint),
        closingNote: (text) => void closing.push(text),
        get logging() {
          return logging();
        },
      };
      if (!((opts as { model?: unknown }).model ?? '/').toString().includes('/')) (await import('./flags/model-alias.js')).resolveModelFlags(cmd, opts as Record<string, unknown>, io.env, `router ${names.join(' ')}`);
      // A state file that cannot be used is said on this run's stderr (internal/kept-state.ts), once.
      if (facts.readsNoKeptFiles) await fn(ctx, ...args);
      else await hearingKeptProblems((line) => io.note(line), () => fn(ctx, ...args));
      await io.flushJq();
      for (const text of closing.splice(0)) io.note(text);
      runtime.exitCode = signalExitCode(controller.signal) ?? runtime.exitCode;
    } catch (err) {
      // Its answer lost, cut or timed out after it was sent, or Ctrl-C while it ran: the service may have charged a call no ledger line has.
      hold?.failed(err, controller.signal.aborted);
      // What was printed before the failure (an answer that ends in exit 10 or 11) is printed through --jq too.
      if (!controller.signal.aborted) await io.flushJq().catch(() => {});
      for (const text of closing.splice(0)) io.note(text);
      const { reportError } = await import('./errors.js');
      // The command's client is closed by now: a model it was refused is looked up with a new one.
      if (!controller.signal.aborted && connected) await (await import('./service/model-hint.js')).addModelHint(err, () => connect(connectedWith), runtime.streams.env, { settings: connected.settings, typed: cmd.getOptionValueSource('model') === 'cli' });
      if (!controller.signal.aborted && connected) await (await import('./service/root-hint.js')).addApiRootHint(err, connected.settings, runtime.streams.env);
      if (connected) {
        const hints = await import('./context.js');
        hints.addKeyHint(err, connected.settings, connectedWith);
        hints.addTimeoutHint(err, flags, connected.client.core.timeoutMs);
        hints.addVoiceHint(err, connected.settings, cmd.getOptionValueSource('voice') === 'cli');
        await hints.addRootHint(err, connected.settings, runtime.streams.env);
        (await import('./service/batches-path-hint.js')).addBatchesPathHint(err, connected.settings);
        hints.addRetryHint(err);
      }
      (await import('./flags/field-flags.js')).nameFlags(err, cmd, runtime.argv);
      // A command that said its own stop on Ctrl-C (serve) throws the interrupt's exit code itself.
      const saidStop = err instanceof CliError && err.exitCode === EXIT.INTERRUPTED;
      runtime.exitCode = reportError(controller.signal.aborted && !saidStop ? controller.signal.reason : err, io);
      // Ctrl-C read as a key (a prompt's raw mode: no SIGINT reached the shell) ends a shell loop too.
      if (runtime.interrupts && runtime.exitCode === EXIT.INTERRUPTED) dieOfSigintAtExit();
    } finally {
      hold?.release();
      runtime.running!--;
      offSigint?.();
      offSigterm?.();
    }
  };
}

/**
 * Commander gives a flag typed after a subcommand to its parent when the parent has a flag of the
 * same name (`models show ID --refresh`, `--jq`; `models options show ID --json`, a grandparent's): the subcommand takes its own back.
 */
function takeBackOwnFlags(cmd: Command, opts: Record<string, unknown>): void {
  for (let parent = cmd.parent; parent?.parent; parent = parent.parent) {
    for (const own of cmd.options) {
      const key = own.attributeName();
      const theirs = parent.options.find((o) => o.long === own.long);
      if (!theirs || cmd.getOptionValueSource(key) === 'cli' || parent.getOptionValueSource(theirs.attributeName()) !== 'cli') continue;
      opts[key] = parent.getOptionValue(theirs.attributeName());
    }
  }
}

/** What a command's definition says of it that its run needs (src/cli/define.ts). */
export interface CommandFacts {
  logsUsage?: boolean;
  jsonFields?: readonly string[];
  /** CommandDef.readsNoKeptFiles: run without hearing kept files' problems. */
  readsNoKeptFiles?: boolean;
}

interface JsonOpts {
  json?: boolean;
  jsonFields?: string;
  jq?: string;
}

/** `--json FIELDS` and `--jq` are checked before the command runs (nothing is sent on a mistake). */
async function shapeJson(path: string, fields: readonly string[] | undefined, opts: JsonOpts, io: IO, argv: readonly string[]): Promise<void> {
  // A word after --json that may be a mistyped field (it is loaded only then: a prompt after --json is common).
  if (opts.json && opts.jsonFields === undefined && /^[a-z][a-z0-9_]*$/i.test(argv[argv.indexOf('--json') + 1] ?? '')) {
    const note = (await import('./io/json-output.js')).argumentNotField(path, argv, fields);
    if (note) io.note(note);
  }
  if (opts.jsonFields === undefined && opts.jq === undefined) return;
  const { checkJq, checkedFields, selectFields } = await import('./io/json-output.js');
  io.jsonShape.select = selectFields;
  if (opts.jsonFields !== undefined) io.jsonShape.fields = checkedFields(path, fields, opts.jsonFields);
  if (opts.jq !== undefined) {
    await checkJq(opts.jq, io.interrupt);
    io.jsonShape.jq = opts.jq;
  }
  opts.json = true;
}
