/** `router api [METHOD] PATH`: any endpoint, authenticated with the active profile (gh api). */
import { gather, holdFirst, HELD_BYTES, pour, shownBody } from './api-body.js';
import { streamEnd } from './api-stream-end.js';
import type { RawResponse } from '../../client/core.js';
import { afterReason, foreignErrorText, isErrorEnvelope, statusLine } from '../../client/errors.js';
import { statusHint } from '../errors.js';
import { CliError, EXIT, exitCodeForStatus, usage } from '../exit-codes.js';
import type { RunContext } from '../run.js';
import { readAllBytes, readStdin } from '../io/read-stdin.js';
import { defineCommand } from '../define.js';
import type { FlagValues } from '../flags/flags.js';
import { utf8Text } from '../io/utf8.js';
import { didYouMean } from '../../internal/did-you-mean.js';
import { topLevelString } from '../../internal/json-span.js';
import { blankInput, onlyBlanks } from '../../internal/blank.js';
import { collect } from '../flags/options.js';
import { refusedKeyHint } from '../context.js';
import { unheardError } from '../service/unheard.js';
import { readFileFor, takeStdin } from '../io/input.js';
import type { IO } from '../io/io.js';
import { headersOf } from './api-headers.js';
import { counted } from '../../internal/counted.js';
import { refuseUnderBudget } from './api-budget.js';
import { withJsonForms } from '../../internal/hide-secrets.js';
import { openaiMethod } from '../flags/openai-cli-words.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof METHODS)[number];

/** A -f or -F value with its place on the command line: gh builds `a[][k]` objects in the order given, across both flags. */
type GivenField = { text: string; at: number };
let given = 0;
const inOrder = (text: string, previous: GivenField[] = []): GivenField[] => [...previous, { text, at: given++ }];

const FLAGS = {
  method: { flags: '-X, --method <method>', help: `HTTP method: ${METHODS.join(', ')} (default GET; POST with fields or --input, unless --paginate)`, values: METHODS },
  header: { flags: '-H, --header <name:value>', help: 'add a request header (repeatable)', parse: collect },
  rawField: { flags: '-f, --raw-field <key=value>', help: 'a string field: in the query for GET, else in the JSON body (repeatable)', parse: inOrder },
  field: { flags: '-F, --field <key=value>', help: "a typed field: true, false, null and numbers as JSON, @FILE for a file's text, @@ for a leading @ (repeatable)", parse: inOrder },
  input: { flags: '--input <file>', help: 'the request body from a file, or - for stdin (fields then go in the query)' },
  paginate: { flags: '--paginate', help: 'GET: follow has_more/last_id through every page; prints one list with every item' },
  include: { flags: '-i, --include', help: 'print the status line and the response headers before the body' },
  management: { flags: '--management', help: 'send the management key (the default for /alpha/ and /v1/audio/ paths)' },
  jq: { flags: '--jq <expr>', help: 'filter the JSON answer with a jq expression (strings print raw)' },
  ignoreBudget: { flags: '--ignore-budget', help: 'send a paid call (a POST that generates or makes a batch) though daily_budget / monthly_budget is set: router api is not held to them, nor in the usage ledger' },
} as const;

type ApiOpts = FlagValues<typeof FLAGS>;

export const api = defineCommand({
  name: 'api',
  summary: 'call any endpoint with your key (--paginate, --jq)',
  description: "Call any endpoint of the API with the active profile's key and print the answer's body.",
  usage: '[options] [method] <path>',
  args: [
    // Both optional to commander: a lone argument is the path (sorted out in runApi), as the usage line says.
    { name: '[method]', help: `HTTP method: ${METHODS.join(', ')} (default GET; POST with fields or --input)` },
    { name: '[path]', help: 'path relative to the API root, e.g. /v1/batches or /alpha/decisions' },
  ],
  flags: FLAGS,
  notes: `The exit code follows the HTTP status (see "Exit codes" in router --help), or that of the error an event stream ends in; the body is printed whatever the status, as it comes, decoded when coded (gzip, br, deflate) and with your keys shown as ****.`,
  examples: [
    'router api /v1/batches',
    "router api /v1/batches -f limit=2 --paginate --jq '.data[].id'",
    "router api POST /v1/chat/completions -f model=local/echo \\\n-F 'messages[][role]=user' -f 'messages[][content]=hi'",
    'echo \'{"model":"local/echo","messages":[{"role":"user","content":"hi"}]}\' \\\n| router api POST /v1/chat/completions --input -',
    'router api -i /v1/models',
  ],
  run: runApi,
});

/** An own property, whatever its name: `__proto__` or `constructor` set as a field names a member of the body, never the prototype. */
const own = (o: object, k: string, v: unknown) => Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

/** Sets `key` (with `a[b]` and `a[]` nesting, as gh does) to `value` in `target`. */
export function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.match(/^[^[\]]+|\[[^[\]]*\]/g);
  if (!parts || parts.join('') !== key) throw usage(`field name "${key}" is not key, key[sub] or key[]`);
  const names = parts.map((p) => (p.startsWith('[') ? p.slice(1, -1) : p));
  let node: Record<string, unknown> | unknown[] = target;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const last = i === names.length - 1;
    const nextIsArray = !last && names[i + 1] === '';
    if (Array.isArray(node)) {
      // `a[][k]`: a new element when the last one already has k.
      const tail = node.at(-1) as Record<string, unknown> | undefined;
      if (last) node.push(value);
      else {
        const sub = names[i + 1]!;
        if (!tail || typeof tail !== 'object' || Array.isArray(tail) || Object.hasOwn(tail, sub)) node.push({});
        node = node.at(-1) as Record<string, unknown>;
      }
      continue;
    }
    if (last) own(node, name, value);
    else {
      if (!Object.hasOwn(node, name)) own(node, name, nextIsArray ? [] : {});
      const next = node[name];
      // `-F a=2 -F a[b]=1`, `-F a[b]=1 -F a[]=2`: one name cannot be a value, an object and a list at once.
      if (next === null || typeof next !== 'object' || Array.isArray(next) !== nextIsArray) {
        const was = Array.isArray(next) ? 'a list' : next !== null && typeof next === 'object' ? 'an object' : `the value ${JSON.stringify(next)}`;
        throw usage(`field "${key}": ${parts.slice(0, i + 1).join('')} is ${was} from an earlier field, not ${nextIsArray ? 'a list' : 'an object'}`);
      }
      node = next as Record<string, unknown> | unknown[];
    }
  }
}

async function typed(raw: string, key: string, io: IO): Promise<unknown> {
  if (raw === 'true' || raw === 'false' || raw === 'null') return JSON.parse(raw);
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(raw)) {
    // JSON.stringify would send Infinity as null, a number past 2^53 as another integer (in any notation:
    // 9007199254740993.0), and one too small as 0.
    const n = Number(raw);
    const lost = !Number.isFinite(n) || Math.abs(n) > Number.MAX_SAFE_INTEGER || (n === 0 && /[1-9]/.test(raw.split(/[eE]/)[0]!));
    if (lost) throw usage(`-F ${key}=${raw}: the number cannot be sent as it is (past what JSON numbers hold here); -f sends it as a string`);
    return n;
  }
  if (raw.startsWith('@@')) return raw.slice(1);
  // As gh api: "@-" is stdin (read once: a second reader is refused).
  if (raw === '@-') {
    takeStdin(io, `-F ${key}=@-`);
    return readStdin(io, io.interrupt);
  }
  if (raw.startsWith('@')) return utf8Text(await readFileFor('-F', raw.slice(1), io.interrupt), `-F: ${raw.slice(1)}`);
  return raw;
}

async function fieldsOf(opts: ApiOpts, io: IO): Promise<[string, unknown][]> {
  const pair = async (flag: string, f: string, conv: (v: string, key: string, io: IO) => unknown): Promise<[string, unknown]> => {
    const at = f.indexOf('=');
    if (at <= 0) throw usage(`${flag} ${JSON.stringify(f)}: give key=value`);
    return [f.slice(0, at), await conv(f.slice(at + 1), f.slice(0, at), io)];
  };
  const all = [...(opts.rawField ?? []).map((f) => ({ ...f, typed: false })), ...(opts.field ?? []).map((f) => ({ ...f, typed: true }))];
  const fields: [string, unknown][] = [];
  for (const f of all.sort((a, b) => a.at - b.at)) fields.push(f.typed ? await pair('-F', f.text, typed) : await pair('-f', f.text, (v) => v));
  return fields;
}

async function runApi(ctx: RunContext<ApiOpts>, first: string | undefined, second: string | undefined): Promise<void> {
  const { io, opts, signal } = ctx;
  if (first === undefined) throw usage('missing required argument \'path\': give one relative to the API root, e.g. router api /v1/models');
  const upper = first.toUpperCase();
  const given = second ?? first;
  // As gh api: "v1/models" is "/v1/models"; a URL is no path.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(given)) throw usage(`give a path relative to the API root (e.g. /v1/models), not a URL: "${given}"`);
  const openai = given.includes('/') ? undefined : openaiMethod(given);
  if (openai) throw usage(`router api takes a path relative to the API root (e.g. /v1/models), not a command: ${openai}`);
  const path = given.startsWith('/') ? given : `/${given}`;
  if (second !== undefined && !(METHODS as readonly string[]).includes(upper)) throw usage(`"${first}" is not an HTTP method (${METHODS.join(', ')})`);
  if (second === undefined && (METHODS as readonly string[]).includes(upper)) throw usage(`no path after ${upper}: give one relative to the API root, e.g. router api ${upper} /v1/batches`);
  const fields = await fieldsOf(opts, io);
  const headers = headersOf(io, opts.header);
  let body: string | Buffer | undefined;
  if (opts.input === '-') takeStdin(io, '--input -');
  if (opts.input !== undefined) body = opts.input === '-' ? await readAllBytes(io.stdin, signal) : await readFileFor('--input', opts.input, signal);
  // An empty stdin (a pipe from a command that failed) or file is a mistake, not a body to send.
  if (body !== undefined && onlyBlanks(body)) throw usage(opts.input === '-' ? `--input -: ${blankInput(body)} (pipe the body in; a POST with no body is router api POST PATH)` : `--input: ${blankInput(body, opts.input)} (a POST with no body is router api POST PATH)`);
  const method = (opts.method?.toUpperCase() ?? (second !== undefined ? upper : (fields.length || body !== undefined) && !opts.paginate ? 'POST' : 'GET')) as Method;
  if (!METHODS.includes(method)) throw usage(`-X ${opts.method}${didYouMean(method, METHODS)}: use one of ${METHODS.join(', ')}`);
  if (opts.paginate && method !== 'GET') throw usage('--paginate goes with GET');
  const [pathOnly, queryText] = path.split('?', 2) as [string, string | undefined];
  const query: Record<string, string[]> = {};
  for (const [k, v] of new URLSearchParams(queryText ?? '')) (query[k] ??= []).push(v);
  if (method === 'GET' || body !== undefined) {
    for (const [k, v] of fields) (query[k] ??= []).push(typeof v === 'string' ? v : JSON.stringify(v));
  } else if (fields.length) {
    const obj: Record<string, unknown> = {};
    for (const [k, v] of fields) setField(obj, k, v);
    body = JSON.stringify(obj);
  }
  // An event stream is no JSON answer: --jq would fail on it once the whole stream was paid for.
  if (opts.jq !== undefined && body !== undefined && asksForStream(body)) throw usage('--jq filters a JSON answer, and this body asks for an event stream ("stream": true): nothing was sent; drop --jq, or "stream"');
  // As speak: the speech route answers audio, which a terminal would take as control bytes (and it costs a call).
  if (io.stdoutTTY && method === 'POST' && /^\/v1\/audio\/speech\/?$/.test(pathOnly)) throw usage('refusing to write audio to a terminal: redirect stdout (router api POST /v1/audio/speech … > out.mp3)');
  const management = opts.management ?? /^\/(alpha\/|v1\/audio\/)/.test(pathOnly);
  const { client, settings } = await ctx.connect({ management });
  if (method === 'POST' && !opts.ignoreBudget) refuseUnderBudget(settings, pathOnly);
  try {
    const pages: unknown[] = [];
    let after: string | undefined;
    const cursors = new Set<string>();
    for (;;) {
      const res = await client.raw.send({ method, path: pathOnly, query: { ...query, ...(after ? { after: [after] } : {}) }, headers, body }, { signal });
      if (io.verbose) io.note(`${method} ${pathOnly} -> ${res.status}${res.requestId ? ` (request ${res.requestId})` : ''}`);
      // The keys in use never go out, not even echoed by the server (a header, a body, 2xx or not, coded or not; in JSON, escaped).
      const shown = shownBody(res, client.core.url(pathOnly, 'root'), withJsonForms(io.secrets), io.marked.marks);
      // An event stream that fails under its 200 is passed on as it came, and exits as its error's status would.
      const end = res.status === 200 ? streamEnd(res.headers['content-type']) : undefined;
      const answer = end ? end.watch(shown) : shown;
      // The first MiB before anything is printed: a stdout that fails on the head must not lose what was made.
      const { head, more } = await holdFirst(answer, HELD_BYTES);
      if (opts.include) io.out(io.redact(statusAndHeaders(res)));
      const failed = res.status < 200 || res.status >= 300;
      if (failed) {
        if (more) await pour(io, head, answer, true);
        return failWith(ctx, `${method} ${new URL(client.core.url(pathOnly, 'root')).pathname}`, res.status, more ? '' : head.toString('utf8'), res.status === 401 ? (headers.authorization !== undefined ? ' (the Authorization header given with -H)' : refusedKeyHint(settings, { management })) : rootTwiceHint(res.status, pathOnly, client.core.apiRoot));
      }
      if (method !== 'GET') recordMade(ctx, method, pathOnly, head);
      const json = /json/.test(String(res.headers['content-type'] ?? ''));
      // Printed as it comes (bounded memory: a 64 MiB answer is never held whole), unless it is to be read as JSON.
      if (!opts.paginate && opts.jq === undefined && !(json && io.stdoutTTY)) {
        await pour(io, head, answer, json);
        return end?.check(`${method} ${new URL(client.core.url(pathOnly, 'root')).pathname}`);
      }
      const bytes = more ? Buffer.concat([head, ...(await gather(answer))]) : head;
      if (!opts.paginate) return print(ctx, bytes, res);
      const page = parse(bytes.toString('utf8'));
      // Not a list (GET /v1/key, /v1/credits): printed as it came, as gh api --paginate does, not made a list of one.
      if (!pages.length && !Array.isArray((page as { data?: unknown } | null)?.data)) return print(ctx, bytes, res);
      pages.push(page);
      const p = page as { has_more?: boolean; last_id?: string | null };
      if (!p.has_more || !p.last_id) break;
      if (cursors.has(p.last_id)) throw new CliError(`--paginate: the listing does not end: last_id ${p.last_id} comes again`, EXIT.SERVER);
      cursors.add(p.last_id);
      after = p.last_id;
    }
    const items = pages.flatMap((p) => ((p as { data?: unknown[] }).data ?? []) as unknown[]);
    const ids = items.map((i) => (i as { id?: string }).id ?? null);
    io.json({ object: 'list', data: items, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null, has_more: false });
  } catch (err) {
    throw method === 'GET' ? err : unheardError(err, `the service may have carried out ${method} ${pathOnly} all the same: check before sending it again`, false);
  } finally {
    await client.close();
  }
}

/** A 404 for "/api/v1/…" under a root that ends in /api (the root's part given twice), or for "/models" (no /v1): the path to give. */
function rootTwiceHint(status: number, path: string, root: string): string {
  const prefix = new URL(root).pathname.replace(/\/+$/, '');
  if (status !== 404) return '';
  if (prefix && path.startsWith(`${prefix}/`)) return ` (the API root ${root.replace(/\/+$/, '')} ends in ${prefix} already: give the path as ${path.slice(prefix.length)})`;
  // Below /beta, the deployed service's batches: a 404 there may be a batch it does not have.
  return /^\/(?!v1\/|beta\/|_)[a-z]/.test(path) ? ` (the service's paths begin with /v1: give the path as /v1${path})` : '';
}

function statusAndHeaders(res: RawResponse): string {
  const lines = [`HTTP/1.1 ${res.status}`];
  for (const [k, v] of Object.entries(res.headers)) for (const one of Array.isArray(v) ? v : [v]) if (one !== undefined) lines.push(`${k}: ${one}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** A JSON body with "stream": true (a chat completion, a response): its answer is an event stream. */
function asksForStream(body: string | Buffer): boolean {
  try {
    return (JSON.parse(body.toString()) as { stream?: unknown } | null)?.stream === true;
  } catch {
    return false;
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`the answer is not JSON (${counted(text.length, 'byte')}): --paginate and --jq need JSON`, EXIT.SERVER);
  }
}

/**
 * What a call made (a batch, a response), named by the error line if its answer cannot be printed. Read from the
 * answer's first MiB, its top-level "id" and "object" found without parsing the rest: an answer of 60 MiB is
 * never held for it, and the service puts them first.
 */
function recordMade(ctx: RunContext<ApiOpts>, method: string, path: string, head: Buffer): void {
  const id = topLevelString(head, 'id');
  if (id === undefined) return;
  const object = topLevelString(head, 'object');
  ctx.io.made(`${method} ${path} made ${object === undefined ? '' : `${object} `}${id}`);
}

/** JSON is printed as JSON (pretty on a terminal, through --jq when given); anything else byte for byte. */
function print(ctx: RunContext<ApiOpts>, bytes: Buffer, res: RawResponse): void {
  const json = /json/.test(String(res.headers['content-type'] ?? ''));
  if (ctx.opts.jq !== undefined || (json && ctx.io.stdoutTTY)) ctx.io.json(parse(bytes.toString('utf8')));
  else ctx.io.out(!json || bytes.at(-1) === 10 ? bytes : Buffer.concat([bytes, Buffer.from('\n')]));
}

function failWith(ctx: RunContext<ApiOpts>, request: string, status: number, text: string, hint: string): never {
  const shown = ctx.io.redact(text);
  if (shown) ctx.io.out(shown.endsWith('\n') ? shown : `${shown}\n`);
  let message = `${request}: ${statusLine(status)}`;
  try {
    const body = JSON.parse(text) as unknown;
    // The service's envelope, or what another JSON error says (a gateway's problem+json title and detail).
    const m = isErrorEnvelope(body) ? body.error.message : afterReason(status, foreignErrorText(body));
    if (m) message += `: ${m}`;
    hint ||= statusHint(status, m ?? '');
  } catch {
    /* not JSON: the status says it */
  }
  throw new CliError(`${message}${hint}`, exitCodeForStatus(status));
}
