// The gateway bench's upstream (#43): a small node:http server that answers OpenAI-compatible
// `POST /v1/chat/completions` with canned answers, byte for byte what `router serve`'s fake models send
// to the bench's two requests, at a fraction of their CPU. Run as its own process; prints one JSON line
// ({ api_root, api_key }) like `router serve --json`.
// - not streamed (`local/echo`, "hi"): the same 793-byte JSON body, its content the last user message;
// - streamed (`local/lorem`, "write 20 words"): `: ROUTER PROCESSING`, the same 22 token chunks, the
//   finish chunk and the usage chunk (24 events, 7,313 bytes with [DONE]), one write per event with a
//   turn of the event loop (setImmediate) between them, as the emulator's writeSSE does for short streams.
// Ids and `created` are made per request, in the emulator's shape and length. The answer does not
// depend on anything but `model`, `stream` and the last message: what it costs is what the wire costs.
// `GET /_mock/stats`: `{"chat_connections": n}`, the connections a chat request came on so far (a
// caller that waits for a new connection to its upstream pays a connect in its latency).
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';

const KEY = `sk-mock-${randomBytes(12).toString('hex')}`;
const PROVIDER = 'local-alpha';
const WORDS = ['Garden', ' open', ' summer', ' steady', ' silver', ' token', ' gentle', ' measure', '.', ' Rapid', ' planet', ' lantern', ' yellow', ' south', ' rapid', ' harbor', ' candle', ' echo', ' river', ' careful', ' north', '.'];
const STREAM_USAGE =
  '{"prompt_tokens":5,"completion_tokens":22,"total_tokens":27,"cost":0.0000355,"is_byok":false,"prompt_tokens_details":{"cached_tokens":0,"cache_write_tokens":0,"audio_tokens":0,"file_tokens":0,"video_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"image_tokens":0},"cost_details":{"upstream_inference_cost":null,"upstream_inference_prompt_cost":0.0000025,"upstream_inference_completions_cost":0.000033}}';
const ECHO_USAGE =
  '{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4,"cost":0.000005,"is_byok":false,"prompt_tokens_details":{"cached_tokens":0,"cache_write_tokens":0,"audio_tokens":0,"file_tokens":0,"video_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"image_tokens":0},"cost_details":{"upstream_inference_cost":null,"upstream_inference_prompt_cost":0.000003,"upstream_inference_completions_cost":0.000002}}';
const TOKEN_TAILS = WORDS.map((w) => `{"role":"assistant","content":${JSON.stringify(w)}},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}\n\n`);
const FINISH_TAIL = '{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"stop","logprobs":null}]}\n\n';
const CORS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'x-request-id, x-generation-id, retry-after, allow, accept-encoding' };

let serial = 0;
let chatConnections = 0;
const counted = new WeakSet();
/** 20 hex digits, unique per process: the emulator's id length. */
const hex20 = (prefix) => `${prefix}${(serial++).toString(16).padStart(20 - prefix.length, '0')}`;
const salt = randomBytes(4).toString('hex');

function answer(req, res, body) {
  if (req.headers.authorization !== `Bearer ${KEY}`) {
    res.writeHead(401, { 'content-type': 'application/json', ...CORS });
    return res.end('{"error":{"code":401,"message":"mock upstream: wrong key"}}');
  }
  let ask;
  try {
    ask = JSON.parse(body);
  } catch {
    res.writeHead(400, { 'content-type': 'application/json', ...CORS });
    return res.end('{"error":{"code":400,"message":"mock upstream: body is not JSON"}}');
  }
  const created = Math.floor(Date.now() / 1000);
  const id = `gen-${created}-${hex20(salt)}`;
  const model = JSON.stringify(String(ask.model));
  const headers = { ...CORS, 'x-request-id': `req_${hex20(salt)}` };
  if (!ask.stream) {
    const last = ask.messages?.at?.(-1)?.content;
    const text = `{"id":"${id}","object":"chat.completion","created":${created},"model":${model},"provider":"${PROVIDER}","system_fingerprint":null,"service_tier":null,"choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(typeof last === 'string' ? last : '')},"refusal":null,"reasoning":null},"finish_reason":"stop","native_finish_reason":"stop","logprobs":null}],"usage":${ECHO_USAGE}}`;
    res.writeHead(200, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    return res.end(text);
  }
  res.writeHead(200, { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(': ROUTER PROCESSING\n\n');
  const head = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${model},"provider":"${PROVIDER}","choices":`;
  const events = [...TOKEN_TAILS.map((tail) => `${head}[{"index":0,"delta":${tail}`), `${head}[{"index":0,"delta":${FINISH_TAIL}`, `${head}[],"usage":${STREAM_USAGE}}\n\n`];
  let i = 0;
  let closed = false;
  res.once('close', () => (closed = true));
  const next = () => {
    if (closed) return;
    if (i < events.length) {
      res.write(events[i++]);
      setImmediate(next);
      return;
    }
    res.write('data: [DONE]\n\n');
    res.end();
  };
  next();
}

const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  if (req.method === 'GET' && req.url === '/_mock/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ chat_connections: chatConnections }));
  }
  if (!counted.has(req.socket)) {
    counted.add(req.socket);
    chatConnections++;
  }
  if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
    res.writeHead(404, { 'content-type': 'application/json', ...CORS });
    return res.end('{"error":{"code":404,"message":"mock upstream: only POST /v1/chat/completions"}}');
  }
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => answer(req, res, parts.length === 1 ? parts[0].toString() : Buffer.concat(parts).toString()));
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  console.log(JSON.stringify({ api_root: `http://127.0.0.1:${port}`, api_key: KEY, mock: true }));
});
process.on('SIGTERM', () => process.exit(0));
// --exit-with-stdin: gone with the bench that started it (its pipe closes however it ends).
if (process.argv.includes('--exit-with-stdin')) process.stdin.on('end', () => process.exit(0)).resume();
