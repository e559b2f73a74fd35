import { InvalidArgumentError, Option, type Command } from '../commander.js';
import type { Batch, BatchEndpoint, BatchList } from '../../client/types.js';
import { action, type RunContext } from '../run.js';
import { commaList, integerIn, numberIn } from '../options.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import type { IO } from '../io.js';

export const ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/embeddings'];
export const LIST_STATUSES = ['validating', 'in_progress', 'completed', 'failed', 'expired', 'cancelled'];
const TERMINAL = ['completed', 'failed', 'expired', 'cancelled'];
const MAX_BYTES = 200 * 1024 * 1024;
const MAX_REQUESTS = 5000;
const CONFIRM_BYTES = 50 * 1024 * 1024;

interface CreateOpts {
  endpoint?: string;
  model?: string;
  providerOnly?: string[];
  fallbacks?: boolean;
  completionWindow: string;
  watch?: boolean;
  results?: string | true;
  interval: number;
  json?: boolean;
  yes?: boolean;
}

interface ListOpts {
  limit?: number;
  after?: string;
  status?: string[];
  createdAfter?: string;
  createdBefore?: string;
  all?: boolean;
  json?: boolean;
  jsonl?: boolean;
}

interface GetOpts {
  watch?: boolean;
  results?: string | true;
  interval: number;
  json?: boolean;
}

function collectStatus(value: string, previous: string[] = []): string[] {
  for (const s of value.split(',')) {
    if (s === 'finalizing' || s === 'cancelling') {
      throw new InvalidArgumentError(`"${s}" cannot be filtered on: the service collapses it into in_progress (use in_progress).`);
    }
    if (!LIST_STATUSES.includes(s)) throw new InvalidArgumentError(`allowed: ${LIST_STATUSES.join(', ')}.`);
  }
  return [...previous, ...value.split(',')];
}

/** Digits pass through as a Unix timestamp; anything else is read as a date. */
export function toTimestamp(flag: string, value: string): string {
  if (/^\d+$/.test(value)) return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw usage(`${flag} must be a Unix timestamp or a date (e.g. 2026-11-01 or 2026-11-01T12:00:00Z), got "${value}"`);
  return String(Math.floor(ms / 1000));
}

export function registerBatch(program: Command): void {
  const batch = program
    .command('batch')
    .summary('create, list and follow asynchronous batches')
    .description('Asynchronous batches of requests against one endpoint: create from JSONL, list, get, watch.');

  batch
    .command('create')
    .description('create a batch from a JSONL file: one {"custom_id", "body"} (or {"custom_id", "method", "url", "body"}) per line')
    .argument('<file>', 'JSONL file, or - for stdin')
    .addOption(new Option('--endpoint <path>', 'target endpoint (default: the lines\' url, else /v1/chat/completions)').choices(ENDPOINTS))
    .option('-m, --model <id>', 'batch model (default: the model the bodies agree on, else the profile\'s)')
    .option('--provider-only <slugs>', 'only these providers, comma-separated', commaList)
    .option('--no-fallbacks', 'do not fall back to other providers')
    .addOption(new Option('--completion-window <w>', 'completion window').choices(['24h']).default('24h'))
    .option('-w, --watch', 'follow the batch until it ends')
    .option('--results [file]', 'with --watch: write the results as JSONL (stdout when no file)')
    .option('--interval <seconds>', 'first polling interval of --watch (grows with backoff)', numberIn(0.05, 3600), 1)
    .option('--json', 'print the batch object')
    .option('-y, --yes', 'do not ask for confirmation of a large file')
    .addHelpText(
      'after',
      `
Limits: at most ${MAX_REQUESTS} requests and 200 MB. Every line is checked before anything is sent.

Examples:
  $ router batch create requests.jsonl --model local/echo
  $ router batch create requests.jsonl --watch --results results.jsonl
  $ cat requests.jsonl | router batch create - --endpoint /v1/embeddings --json`,
    )
    .action(action<CreateOpts, [string]>(runCreate));

  batch
    .command('list')
    .description('list the batches of your workspace, newest first')
    .option('--limit <n>', 'page size, 1 to 100 (default 20)', integerIn(1, 100))
    .option('--after <id>', 'start after this batch id (the last_id of the previous page)')
    .option('--status <status>', `filter, repeatable or comma-separated: ${LIST_STATUSES.join(', ')}`, collectStatus)
    .option('--created-after <when>', 'only batches created after (Unix seconds or a date)')
    .option('--created-before <when>', 'only batches created before (Unix seconds or a date)')
    .option('--all', 'follow every page')
    .option('--json', 'print the page (with --all: every batch in one list)')
    .option('--jsonl', 'print one batch per line')
    .addHelpText('after', '\nExamples:\n  $ router batch list --status in_progress --status validating\n  $ router batch list --all --created-after 2026-11-01 --jsonl')
    .action(action<ListOpts>(runList));

  batch
    .command('get')
    .description('show a batch; --results writes its results as JSONL; --watch follows it until it ends')
    .argument('<id>', 'batch id')
    .option('-w, --watch', 'poll with backoff until the batch ends')
    .option('--results [file]', 'write the results as JSONL to FILE (atomically) or stdout')
    .option('--interval <seconds>', 'first polling interval of --watch (grows with backoff)', numberIn(0.05, 3600), 1)
    .option('--json', 'print the batch object as the service sends it (results included)')
    .addHelpText('after', '\nExamples:\n  $ router batch get batch_abc --watch\n  $ router batch get batch_abc --results out.jsonl\n  $ router batch get batch_abc --json | jq .request_counts')
    .action(action<GetOpts, [string]>(runGet));
}

interface Scan {
  file: string;
  endpoint: BatchEndpoint;
  model: string | undefined;
  count: number;
  bytes: number;
  /** Every line is exactly {custom_id, body}: its text can go out unchanged. */
  plain: boolean;
}

/** Reads the whole file once and reports every problem with its line number; nothing is sent. */
export async function scanRequests(file: string, label: string, opts: { endpoint?: string; model?: string }): Promise<Scan> {
  const { readLines, isBlank } = await import('../jsonl.js');
  const problems: string[] = [];
  const problem = (line: number, text: string) => {
    if (problems.length < 20) problems.push(`${label}:${line}: ${text}`);
    else problems.length === 20 && problems.push('');
  };
  let problemCount = 0;
  const seen = new Map<string, number>();
  let endpointFromUrl: { value: string; line: number } | undefined;
  const models = new Map<string, number>();
  let count = 0;
  let bytes = 0;
  let plain = true;
  for await (const { number, bytes: raw } of readLines(file)) {
    if (isBlank(raw)) continue;
    bytes += raw.length + 1;
    count++;
    const report = (text: string) => {
      problemCount++;
      problem(number, text);
    };
    let item: unknown;
    try {
      item = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      report(`not JSON (${(err as Error).message.replace(/\s+/g, ' ')})`);
      continue;
    }
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      report('not a JSON object');
      continue;
    }
    const o = item as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.some((k) => k !== 'custom_id' && k !== 'body')) plain = false;
    if (o.custom_id === undefined || o.custom_id === null) report('missing custom_id');
    else if (typeof o.custom_id !== 'string') report('custom_id must be a string');
    else if (o.custom_id === '') report('empty custom_id');
    else if (seen.has(o.custom_id)) report(`duplicate custom_id "${o.custom_id}" (first on line ${seen.get(o.custom_id)})`);
    else seen.set(o.custom_id, number);
    if (o.body === undefined) report('missing body');
    else if (!o.body || typeof o.body !== 'object' || Array.isArray(o.body)) report('body must be a JSON object');
    else {
      const m = (o.body as Record<string, unknown>).model;
      if (typeof m === 'string' && !models.has(m)) models.set(m, number);
      if (opts.model && m !== undefined && m !== opts.model) report(`body.model "${String(m)}" differs from --model "${opts.model}"`);
    }
    if (o.method !== undefined && o.method !== 'POST') report(`method must be POST, got ${JSON.stringify(o.method)}`);
    if (o.url !== undefined) {
      const url = typeof o.url === 'string' ? (o.url.startsWith('/v1/') ? o.url : `/v1${o.url.startsWith('/') ? '' : '/'}${o.url}`) : '';
      if (!ENDPOINTS.includes(url)) report(`url ${JSON.stringify(o.url)} is not a batch endpoint (${ENDPOINTS.join(', ')})`);
      else if (opts.endpoint && url !== opts.endpoint) report(`url "${url}" differs from --endpoint "${opts.endpoint}"`);
      else if (endpointFromUrl && endpointFromUrl.value !== url) report(`url "${url}" differs from "${endpointFromUrl.value}" on line ${endpointFromUrl.line}`);
      else endpointFromUrl ??= { value: url, line: number };
    }
  }
  if (count === 0) throw usage(`${label}: no requests (the file is empty)`);
  if (count > MAX_REQUESTS) {
    problemCount++;
    problems.unshift(`${label}: ${count} requests: a batch holds at most ${MAX_REQUESTS}`);
  }
  if (bytes > MAX_BYTES) {
    problemCount++;
    problems.unshift(`${label}: payload of ${(bytes / 1024 / 1024).toFixed(1)} MB is over the 200 MB limit`);
  }
  if (!opts.model && models.size > 1) {
    const [[a, la], [b, lb]] = [...models.entries()];
    problemCount++;
    problems.push(`${label}: the bodies name different models ("${a}" on line ${la}, "${b}" on line ${lb}): give --model`);
  }
  if (problemCount > 0) {
    const shown = problems.filter(Boolean);
    const more = problemCount - shown.length;
    throw new CliError(`${shown.join('\nerror: ')}${more > 0 ? `\nerror: … and ${more} more problems` : ''}`, EXIT.USAGE);
  }
  const endpoint = (opts.endpoint ?? endpointFromUrl?.value ?? '/v1/chat/completions') as BatchEndpoint;
  return { file, endpoint, model: opts.model ?? [...models.keys()][0], count, bytes, plain };
}

/** The requests as JSON array elements, comma-separated, read again from the file in chunks. */
function requestStream(scan: Scan): () => AsyncIterable<string | Uint8Array> {
  return async function* () {
    const { readLines, isBlank } = await import('../jsonl.js');
    let first = true;
    let out: Buffer[] = [];
    let size = 0;
    const COMMA = Buffer.from(',');
    for await (const { bytes } of readLines(scan.file)) {
      if (isBlank(bytes)) continue;
      let item = bytes;
      if (!scan.plain) {
        const o = JSON.parse(bytes.toString('utf8')) as { custom_id: string; body: unknown };
        item = Buffer.from(JSON.stringify({ custom_id: o.custom_id, body: o.body }));
      }
      if (!first) out.push(COMMA);
      first = false;
      out.push(item);
      size += item.length + 1;
      if (size >= 256 * 1024) {
        yield Buffer.concat(out);
        out = [];
        size = 0;
      }
    }
    if (out.length) yield Buffer.concat(out);
  };
}

async function spoolStdin(): Promise<{ path: string; cleanup: () => void }> {
  const { mkdtempSync, createWriteStream, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { pipeline } = await import('node:stream/promises');
  const dir = mkdtempSync(join(tmpdir(), 'router-batch-'));
  const path = join(dir, 'stdin.jsonl');
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanup);
  await pipeline(process.stdin, createWriteStream(path, { mode: 0o600 }));
  return { path, cleanup };
}

async function runCreate(ctx: RunContext<CreateOpts>, file: string): Promise<void> {
  const { io, opts, flags, signal } = ctx;
  if (opts.results !== undefined && !opts.watch) throw usage('--results goes with --watch (or use: router batch get ID --results)');
  if (opts.model !== undefined && !/^[^/\s]+\/[^/\s]+$/.test(opts.model)) throw usage(`--model must look like <author>/<slug>, got "${opts.model}"`);
  let path = file;
  let cleanup = () => {};
  if (file === '-') {
    if (io.stdinTTY) throw usage('reading requests from stdin, but stdin is a terminal: pipe a JSONL file in');
    ({ path, cleanup } = await spoolStdin());
  } else {
    const { statSync } = await import('node:fs');
    let st;
    try {
      st = statSync(file);
    } catch {
      throw usage(`cannot read ${file}: no such file`);
    }
    if (!st.isFile()) throw usage(`${file} is not a file`);
  }
  try {
    const label = file === '-' ? 'stdin' : file;
    const scan = await scanRequests(path, label, { endpoint: opts.endpoint, model: opts.model });
    const { connect } = await import('../context.js');
    const { client, settings } = await connect(io, flags);
    const model = scan.model ?? settings.model;
    if (!model) throw usage('no model: the bodies name none; give --model (or set a default: router config set model …)');
    if (scan.bytes > CONFIRM_BYTES && !opts.yes && io.stdinTTY && io.stderrTTY && file !== '-') {
      const { confirm } = await import('@inquirer/prompts');
      const ok = await confirm({ message: `Send ${scan.count} requests (${(scan.bytes / 1024 / 1024).toFixed(0)} MB) as one batch?`, default: true }, { output: process.stderr });
      if (!ok) throw new CliError('cancelled; nothing was sent', EXIT.USAGE);
    }
    const provider: { only?: string[]; allow_fallbacks?: boolean } = {};
    if (opts.providerOnly) provider.only = opts.providerOnly;
    if (opts.fallbacks === false) provider.allow_fallbacks = false;
    const head = {
      endpoint: scan.endpoint,
      model,
      completion_window: '24h' as const,
      ...(Object.keys(provider).length ? { provider } : {}),
    };
    const started = Math.floor(Date.now() / 1000) - 1;
    let created: Batch;
    try {
      created = await client.batches.createStreaming(head, requestStream(scan), { signal });
    } catch (err) {
      if ((err as { maybeDelivered?: boolean }).maybeDelivered) {
        throw new CliError(
          `the upload failed after it was sent (${(err as Error).message}); the batch may exist. Check with: router batch list --created-after ${started}`,
          EXIT.NETWORK,
        );
      }
      throw err;
    }
    io.info(`created ${created.id}: ${scan.count} requests to ${scan.endpoint} with ${model} (${created.status})`);
    if (!opts.watch) {
      if (opts.json) io.json(created);
      else io.out(`${created.id}\n`);
      return;
    }
    await watchAndFinish(ctx as RunContext<GetOpts>, client, created.id, created);
  } finally {
    cleanup();
  }
}

async function runList({ io, opts, flags, signal }: RunContext<ListOpts>): Promise<void> {
  if (opts.after !== undefined && opts.after === '') throw usage('--after must not be empty');
  if (opts.json && opts.jsonl) throw usage('--json and --jsonl cannot be combined');
  const query = {
    limit: opts.limit,
    after: opts.after,
    status: opts.status as never,
    created_after: opts.createdAfter === undefined ? undefined : toTimestamp('--created-after', opts.createdAfter),
    created_before: opts.createdBefore === undefined ? undefined : toTimestamp('--created-before', opts.createdBefore),
  };
  const { connect } = await import('../context.js');
  const { client } = await connect(io, flags);
  try {
    const pages: BatchList[] = [];
    const human = !opts.json && !opts.jsonl;
    if (opts.all) for await (const page of client.batches.listAll(query, { signal })) pages.push(page);
    else pages.push(await client.batches.list(query, { signal }));
    const items = pages.flatMap((p) => p.data);
    if (opts.json) {
      if (!opts.all) io.json(pages[0]);
      else io.json({ object: 'list', data: items, first_id: items[0]?.id ?? null, last_id: items.at(-1)?.id ?? null, has_more: false });
      return;
    }
    if (opts.jsonl) {
      for (const b of items) io.jsonl(b);
      return;
    }
    if (human && items.length === 0) {
      io.info('no batches');
      return;
    }
    const rows = items.map((b) => [b.id, b.status, b.endpoint, b.model, `${b.request_counts.completed}/${b.request_counts.failed}/${b.request_counts.total}`, new Date(b.created_at * 1000).toISOString().replace('.000Z', 'Z')]);
    if (io.stdoutTTY) {
      const { table } = await import('../table.js');
      io.out(table(io, ['id', 'status', 'endpoint', 'model', 'done/failed/total', 'created'], rows));
      const last = pages.at(-1)!;
      if (last.has_more) io.info(`more: router batch list --after ${last.last_id}`);
    } else {
      for (const r of rows) io.out(`${r.join('\t')}\n`);
    }
  } finally {
    await client.close();
  }
}

function describeBatch(b: Batch): string {
  const lines: [string, string][] = [
    ['id', b.id],
    ['status', b.status],
    ['endpoint', b.endpoint],
    ['model', b.model],
    ['requests', `${b.request_counts.completed} completed, ${b.request_counts.failed} failed, ${b.request_counts.total} total`],
    ['created', new Date(b.created_at * 1000).toISOString()],
    ['finalized', b.finalized_at ? new Date(b.finalized_at * 1000).toISOString() : '-'],
  ];
  if (b.usage && typeof (b.usage as { cost?: number }).cost === 'number') lines.push(['cost', `$${(b.usage as { cost: number }).cost.toFixed(6)}`]);
  if (b.error) lines.push(['error', b.error.message]);
  const width = Math.max(...lines.map(([k]) => k.length));
  return lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n';
}

type Client = Awaited<ReturnType<typeof import('../context.js').connect>>['client'];

/** Explains the batch-specific answers of Get a batch. */
function batchError(err: unknown, id: string): unknown {
  const status = (err as { status?: number; name?: string }).status;
  if ((err as { name?: string }).name !== 'APIError') return err;
  if (status === 402) return new CliError(`the finalized cost of ${id} exceeds your balance: add credits, then run "router batch get ${id}" again to get the results`, EXIT.PAYMENT);
  if (status === 410) return new CliError(`the results of ${id} were deleted after the 30-day retention`, EXIT.NOT_FOUND);
  if (status === 404) return new CliError(`no batch ${id} in this workspace`, EXIT.NOT_FOUND);
  return err;
}

/** Writes the results as JSONL, to a file (atomically) or stdout; returns the batch metadata. */
async function writeResults(io: IO, client: Client, id: string, target: string | true, signal: AbortSignal): Promise<Batch> {
  const toStdout = target === true || target === '-';
  const { AtomicFile } = await import('../atomic.js');
  const file = toStdout ? undefined : new AtomicFile(target as string);
  const NL = Buffer.from('\n');
  let pending: Buffer[] = [];
  let size = 0;
  const flush = async () => {
    if (!pending.length) return;
    const data = Buffer.concat(pending);
    pending = [];
    size = 0;
    if (file) await file.write(data);
    else if (!io.out(data as unknown as string)) await io.drain();
  };
  const onAbort = () => file?.abortSync();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const batch = await client.batches.getStreaming(
      id,
      async (json) => {
        const line = json.includes(10) ? Buffer.from(JSON.stringify(JSON.parse(json.toString('utf8')))) : json;
        pending.push(line, NL);
        size += line.length + 1;
        if (size >= 256 * 1024) await flush();
      },
      { signal },
    );
    await flush();
    if (!TERMINAL.includes(batch.status)) {
      file?.abortSync();
      throw new CliError(`${id} is ${batch.status}: results come once it ends (use --watch)`, EXIT.FAILURE);
    }
    if (file) await file.commit();
    return batch;
  } catch (err) {
    file?.abortSync();
    throw batchError(err, id);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

async function watch(ctx: RunContext<GetOpts>, client: Client, id: string, first?: Batch): Promise<Batch> {
  const { io, opts, signal } = ctx;
  const started = Date.now();
  const showSpinner = io.stderrTTY && !io.quiet;
  const spinner = showSpinner ? (await import('ora')).default({ stream: process.stderr, isEnabled: true }).start(`${id}: starting`) : undefined;
  let interval = opts.interval * 1000;
  let last = first;
  let lastStatus = first?.status;
  const label = (b: Batch) => {
    const c = b.request_counts;
    const secs = Math.round((Date.now() - started) / 1000);
    return `${id} ${b.status}: ${c.completed} completed, ${c.failed} failed of ${c.total} (${secs}s)`;
  };
  try {
    for (;;) {
      let b: Batch;
      try {
        b = first ?? (await client.batches.get(id, { signal }));
      } catch (err) {
        throw batchError(err, id);
      }
      if (b.status !== lastStatus) {
        if (spinner) spinner.info(`${id}: ${lastStatus ?? 'found'} -> ${b.status}`).start();
        else if (io.verbose) io.note(`${id}: ${b.status}`);
        lastStatus = b.status;
      }
      if (spinner) spinner.text = label(b);
      if (TERMINAL.includes(b.status)) {
        if (spinner) (b.status === 'completed' ? spinner.succeed(label(b)) : spinner.fail(label(b)));
        return b;
      }
      const progressed = last && (last.request_counts.completed !== b.request_counts.completed || last.request_counts.failed !== b.request_counts.failed);
      last = b;
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, interval);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          reject(signal.reason);
        }, { once: true });
      });
      interval = progressed ? opts.interval * 1000 : Math.min(interval * 1.5, 15_000);
      first = undefined;
    }
  } catch (err) {
    if (signal.aborted) {
      spinner?.stop();
      io.note(`stopped watching; ${id} keeps running. Resume with: router batch get ${id} --watch`);
    } else spinner?.stop();
    throw err;
  }
}

async function watchAndFinish(ctx: RunContext<GetOpts>, client: Client, id: string, first?: Batch): Promise<void> {
  const { io, opts, signal } = ctx;
  try {
    const done = await watch(ctx, client, id, first);
    let final = done;
    if (opts.results !== undefined) final = await writeResults(io, client, id, opts.results, signal);
    else if (opts.json) io.json(await client.batches.get(id, { signal }).catch((e) => Promise.reject(batchError(e, id))));
    else if (io.stdoutTTY) io.out(describeBatch(final));
    else io.out(`${id}\t${final.status}\n`);
    if (final.status !== 'completed') {
      throw new CliError(`${id} ${final.status}${final.error ? `: ${final.error.message}` : ''}`, EXIT.BATCH_FAILED);
    }
  } finally {
    await client.close();
  }
}

async function runGet(ctx: RunContext<GetOpts>, id: string): Promise<void> {
  const { io, opts, flags, signal } = ctx;
  if (!id.trim()) throw usage('batch id must not be empty');
  if (opts.json && opts.results !== undefined && (opts.results === true || opts.results === '-')) throw usage('--json and --results to stdout cannot be combined');
  const { connect } = await import('../context.js');
  const { client } = await connect(io, flags);
  if (opts.watch) return watchAndFinish(ctx, client, id);
  try {
    if (opts.results !== undefined) {
      const b = await writeResults(io, client, id, opts.results, signal);
      io.info(`${b.request_counts.completed + b.request_counts.failed} results of ${id} (${b.status})`);
      return;
    }
    let b: Batch;
    try {
      b = await client.batches.get(id, { signal });
    } catch (err) {
      throw batchError(err, id);
    }
    if (opts.json || !io.stdoutTTY) io.json(b);
    else io.out(describeBatch(b));
  } finally {
    await client.close();
  }
}
