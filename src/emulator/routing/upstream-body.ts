/** What a provider is sent of a caller's request: the router's own members left out, the model as the upstream names it. */
import type { Candidate } from './candidates.js';
import { endUser } from './end-user.js';

type Body = Record<string, unknown>;

/** Members of a chat request that are the router's own: they stay here, the upstream never sees them. */
const ROUTER_ONLY = new Set(['models', 'provider', 'route', 'plugins', 'transforms', 'usage', 'session_id', 'debug', 'stop_server_tools_when', 'trace']);

/** The body for candidate `c`: the fake models take it whole (held to their provider); an upstream, without the router's members. */
export function upstreamBody(body: Body, c: Candidate, stream: boolean): Body {
  if (c.adapter.name === 'local') return { ...body, model: c.model.id, models: undefined, provider: { only: [c.slug] } };
  const out: Body = {};
  for (const k in body) if (!ROUTER_ONLY.has(k) && body[k] !== undefined) out[k] = body[k];
  out.model = c.model.upstream;
  if (typeof out.user === 'string') out.user = endUser(out.user);
  if (typeof out.safety_identifier === 'string') out.safety_identifier = endUser(out.safety_identifier);
  if (stream) out.stream_options = { ...(body.stream_options as Body | undefined), include_usage: true };
  return out;
}
