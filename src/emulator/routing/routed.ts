import type { ModelSpec } from '../models/models.js';
import type { Attempt } from './attempt.js';
import type { FaultRule } from '../http/faults.js';
import { openrouterShape, routingMetadata } from './metadata-shape.js';

/** Where a request was routed (fake-route.ts): the model and provider chosen, and the way there. */
export interface Routed {
  model: ModelSpec;
  provider: string;
  requested: string;
  /** Every endpoint of the chain the request's preferences and rules leave, in the chain's order. */
  endpoints: { model: string; provider: string }[];
  /** Up to the model chosen, in the chain's order: the providers asked that failed (a model that is down), and those never asked (passed over). */
  passed: Attempt[];
}

/**
 * The fields a caller opted in to: `router_metadata` (api.md's legacy header, `X-Router-Metadata`)
 * and `openrouter_metadata` (`X-OpenRouter-Metadata`, the deployed service's name and shape).
 */
export interface MetadataAsk {
  router: boolean;
  openrouter: boolean;
}

export const NO_METADATA: MetadataAsk = { router: false, openrouter: false };

export const asksMetadata = (ask: MetadataAsk | undefined) => !!ask && (ask.router || ask.openrouter);

/** The metadata fields an answer carries, as asked. */
export function metadataFields(routed: Routed, api: string, ask: MetadataAsk | undefined, body?: { plugins?: unknown }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (ask?.router) out.router_metadata = routerMetadata(routed, api);
  if (ask?.openrouter) out.openrouter_metadata = openrouterMetadata(routed, api, body);
  return out;
}

/** The metadata fields as response headers (speech's: audio has no body to carry them), `x-router-metadata` and so on: each field's JSON in ASCII. */
export function metadataHeaders(fields: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(fields ?? {})) out[`x-${name.replace('_', '-')}`] = JSON.stringify(value).replace(/[\u007f-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return out;
}

/** Where a fake route is asked from: a request's `provider=` fault, and the metadata its caller opted in to (`api`: chat, responses…). */
export interface RouteAsk {
  fault?: FaultRule;
  ask?: MetadataAsk;
  api?: string;
}

/** The metadata fields of the answer when every provider asked failed (allFailed's), as asked: as the gateway's, nothing chosen. */
export function failedMetadataFields(requested: string, endpoints: Routed['endpoints'], passed: Attempt[], at: RouteAsk | undefined): Record<string, unknown> | undefined {
  if (!asksMetadata(at?.ask)) return undefined;
  const meta = routingMetadata(requested, endpoints.map((e) => ({ ...e, selected: false })), undefined, passed, 1, at?.api ?? 'chat');
  return { ...(at!.ask!.router && { router_metadata: meta }), ...(at!.ask!.openrouter && { openrouter_metadata: openrouterShape(meta, passed) }) };
}

/** The `router_metadata` object surfaced when the caller opts in with api.md's header: the gateway's shape (metadata-shape.ts). */
export function routerMetadata(routed: Routed, api: string) {
  const endpoints = routed.endpoints.map((e) => ({ ...e, selected: e.model === routed.model.id && e.provider === routed.provider }));
  return routingMetadata(routed.requested, endpoints, { model: routed.model.id, provider: routed.provider }, routed.passed, 1, api);
}

/**
 * The OpenAPI's OpenRouterMetadata: the fields above less `generation_time` and those passed over, with `attempts`
 * (each provider asked, 502 for a model that was down) and `pipeline` (a stage per plugin the request named).
 */
export function openrouterMetadata(routed: Routed, api: string, body?: { plugins?: unknown }) {
  const plugins = Array.isArray(body?.plugins) ? (body.plugins as { id?: unknown }[]).filter((p) => typeof p?.id === 'string') : [];
  const pipeline = plugins.map((p) => ({ type: 'plugin', name: p.id as string, summary: `${p.id as string} plugin ran` }));
  return { ...openrouterShape(routerMetadata(routed, api), routed.passed), ...(pipeline.length ? { pipeline } : {}) };
}
