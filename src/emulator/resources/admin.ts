import type { Socket } from 'node:net';
import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { parseFault, FaultSpecError, type FaultBoard } from '../http/faults.js';
import type { RequestLog } from '../http/request-log.js';
import type { BatchEngine } from '../batches/batches.js';
import { defineRoutes } from '../http/routes.js';
import { OPERATOR_WORKSPACE } from '../state/store-api.js';

/** The workspace an admin call acts on: the caller's, or undefined (all) for the operator. */
const scope = (ctx: Ctx): string | undefined => (ctx.key.workspace === OPERATOR_WORKSPACE ? undefined : ctx.key.workspace);

/** Bounds of the emulator-only knobs: the credits a top-up may leave, and how far the clock may be ahead (100 years). */
const MAX_CREDITS = 1e12;
const MAX_CLOCK_OFFSET_S = 100 * 365 * 86_400;

/**
 * Emulator-only routes under `{api_root}/_emulator/`, for tests and demos. A workspace's management
 * key acts on its own workspace only; the operator key (printed by `router serve`) on the server.
 *   POST credits     {amount}          management: top up the caller's workspace; answers {balance}
 *   POST faults      {faults: [...]}   management: replace the caller's workspace's fault rules;
 *                                      operator: the server-wide ones
 *   GET  requests                      management: the workspace's request log; operator: all of it
 *   DELETE requests                    clear that same log
 *   POST clock       {advance_seconds} operator: move the emulator's clock forward
 *   POST workspaces  {credits?}        operator: a new workspace with its own API and management keys
 *   POST batches     {delay_ms}        operator: pause of the batch engine before each request
 *   GET  connections                   operator: each open connection's bytes written and not yet sent
 *                                      (a test waits for a reader that reads nothing to hold the server back)
 */
export const adminRoutes = defineRoutes(({ faults, log, batches, sockets }: { faults: FaultBoard; log: RequestLog; batches: BatchEngine; sockets: Set<Socket> }) => {
  const num = (v: unknown, name: string): number => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new HttpError(400, `${name} must be a number`);
    return v;
  };
  /** A number in [min, max]: a balance or a clock past them no longer fits a date or a JSON number. */
  const within = (v: unknown, name: string, min: number, max: number): number => {
    const n = num(v, name);
    if (n < min || n > max) throw new HttpError(400, `${name} must be between ${min} and ${max}`);
    return n;
  };
  return [
    {
      method: 'POST',
      path: '/_emulator/credits',
      access: 'management',
      handler: async (ctx: Ctx) => {
        const body = await ctx.json<{ amount?: unknown }>();
        const credits = ctx.store.workspace(ctx.workspace).total_credits;
        const balance = ctx.store.topUp(ctx.workspace, within(body.amount, 'amount', -MAX_CREDITS - credits, MAX_CREDITS - credits));
        ctx.send(200, { workspace: ctx.workspace, balance });
      },
    },
    {
      method: 'POST',
      path: '/_emulator/clock',
      access: 'operator',
      handler: async (ctx: Ctx) => {
        const body = await ctx.json<{ advance_seconds?: unknown }>();
        const room = MAX_CLOCK_OFFSET_S - ctx.store.clockOffsetMs() / 1000;
        const offset = ctx.store.advanceClock(within(body.advance_seconds, 'advance_seconds', 0, room) * 1000);
        ctx.send(200, { offset_seconds: offset / 1000, now: Math.floor(ctx.store.now() / 1000) });
      },
    },
    {
      method: 'POST',
      path: '/_emulator/faults',
      access: 'admin',
      handler: async (ctx: Ctx) => {
        const body = await ctx.json<{ faults?: unknown }>();
        if (!Array.isArray(body.faults)) throw new HttpError(400, 'faults must be an array of fault specs');
        try {
          faults.set(body.faults.map((f) => parseFault(String(f))), scope(ctx));
        } catch (err) {
          if (err instanceof FaultSpecError) throw new HttpError(400, err.message);
          throw err;
        }
        ctx.send(200, { faults: faults.list(scope(ctx)) });
      },
    },
    {
      method: 'POST',
      path: '/_emulator/workspaces',
      access: 'operator',
      handler: async (ctx: Ctx) => {
        const body = await ctx.json<{ credits?: unknown }>();
        const created = ctx.store.createWorkspace(undefined, body.credits === undefined ? undefined : within(body.credits, 'credits', 0, MAX_CREDITS));
        ctx.send(200, { workspace: created.workspace.id, api_key: created.apiKey, management_key: created.managementKey });
      },
    },
    {
      method: 'POST',
      path: '/_emulator/batches',
      access: 'operator',
      handler: async (ctx: Ctx) => {
        const body = await ctx.json<{ delay_ms?: unknown }>();
        batches.opts.delayMs = num(body.delay_ms, 'delay_ms');
        ctx.send(200, { delay_ms: batches.opts.delayMs });
      },
    },
    {
      method: 'GET',
      path: '/_emulator/connections',
      access: 'operator',
      handler: async (ctx: Ctx) => {
        ctx.send(200, { data: [...sockets].map((s) => ({ unsent_bytes: s.writableLength })) });
      },
    },
    {
      method: 'GET',
      path: '/_emulator/requests',
      access: 'admin',
      handler: async (ctx: Ctx) => {
        const ws = scope(ctx);
        ctx.send(200, { data: ws === undefined ? log.entries() : log.entries().filter((e) => e.workspace === ws) });
      },
    },
    {
      method: 'DELETE',
      path: '/_emulator/requests',
      access: 'admin',
      handler: async (ctx: Ctx) => {
        const ws = scope(ctx);
        log.remove((workspace) => ws === undefined || workspace === ws);
        ctx.send(200, { data: [] });
      },
    },
  ];
});
