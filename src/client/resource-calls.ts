import { checkOptions, optionNames } from './option-names.js';
import { checkQuery, type QueryNames } from './query-names.js';
import type { AnsweringOptions, CallOptions, PlainCallOptions } from './resources/shared.js';
import { ACTIVITY_QUERY, type Activity } from './resources/activity.js';
import { BATCH_LIST_QUERY, type Batches } from './resources/batches.js';
import type { Chat } from './resources/chat.js';
import type { Credits } from './resources/credits.js';
import type { DecisionOptions, Decisions } from './resources/decisions.js';
import type { Embeddings } from './resources/embeddings.js';
import type { Generations } from './resources/generations.js';
import type { Key } from './resources/key.js';
import { KEY_LIST_QUERY, type Keys } from './resources/keys.js';
import type { Models } from './resources/models.js';
import type { Raw } from './resources/raw.js';
import type { Responses } from './resources/responses.js';
import type { Speech } from './resources/speech.js';

/** The client's resources, by the property that holds each. */
export interface Resources {
  chat: Chat; batches: Batches; responses: Responses; embeddings: Embeddings; speech: Speech; decisions: Decisions; models: Models;
  key: Key; keys: Keys; activity: Activity; credits: Credits; raw: Raw; generations: Generations;
}

type CallsOf<R> = { [M in keyof R]: R[M] extends (...args: never[]) => unknown ? M : never }[keyof R];

const CALL = optionNames<CallOptions>()({ signal: 1, timeoutMs: 1, sessionId: 1, routerMetadata: 1, headers: 1 });
const ANSWERING = optionNames<AnsweringOptions>()({ signal: 1, timeoutMs: 1, sessionId: 1, routerMetadata: 1, headers: 1, answering: 1 });
const DECIDING = optionNames<DecisionOptions>()({ signal: 1, timeoutMs: 1, sessionId: 1, headers: 1, answering: 1 });
const PLAIN = optionNames<PlainCallOptions>()({ signal: 1, timeoutMs: 1, headers: 1 });
const MODELS = optionNames<NonNullable<Parameters<Models['list']>[0]>>()({ signal: 1, timeoutMs: 1, headers: 1, outputModalities: 1 });

/** A call's options: where among its arguments they come, their names, and where its query comes with its names. */
type CallSpec = readonly [number, readonly string[]] | readonly [number, readonly string[], readonly [number, QueryNames]];

/**
 * Every public call of every resource: where among its arguments its options come, and their names (null: it takes
 * none); a call taking a query, where it comes and its names. The type makes a new call a row here too;
 * `guardCalls` checks each call's options and query from this one table. A call the service routes to no model
 * takes no session and no routing metadata (PLAIN).
 */
export const RESOURCE_CALLS = {
  chat: { create: [1, ANSWERING], stream: [1, CALL], streamText: [1, CALL] },
  batches: { url: null, create: [1, PLAIN], createStreaming: [2, PLAIN], list: [1, PLAIN, [0, BATCH_LIST_QUERY]], listAll: [1, PLAIN, [0, BATCH_LIST_QUERY]], get: [1, PLAIN], getStreaming: [2, PLAIN] },
  responses: { create: [1, ANSWERING], stream: [1, CALL] },
  embeddings: { create: [1, ANSWERING] },
  speech: { create: [1, CALL] },
  decisions: { create: [1, DECIDING] },
  models: { list: [0, MODELS] },
  key: { get: [0, PLAIN] },
  keys: { list: [1, PLAIN, [0, KEY_LIST_QUERY]], create: [1, PLAIN], get: [1, PLAIN], update: [2, PLAIN], delete: [1, PLAIN], current: [0, PLAIN] },
  activity: { list: [1, PLAIN, [0, ACTIVITY_QUERY]] },
  credits: { get: [0, PLAIN] },
  raw: { send: [1, CALL] },
  generations: { get: [1, PLAIN], content: [1, PLAIN], feedback: [1, PLAIN] },
} as const satisfies { [R in keyof Resources]: { [M in CallsOf<Resources[R]>]: CallSpec | null } };

/**
 * Each listed call of `resources` checks its options first (`checkOptions`): a promise's call answers a refusal as a
 * rejected promise, as its other failures; a page iterator's (`listAll`) throws it when called.
 */
export function guardCalls(resources: Resources): void {
  for (const [name, calls] of Object.entries(RESOURCE_CALLS)) {
    const resource = resources[name as keyof Resources] as unknown as Record<string, (...args: unknown[]) => unknown>;
    for (const [method, spec] of Object.entries(calls)) {
      if (!spec) continue;
      const [at, known, query] = spec as CallSpec;
      const call = resource[method]!;
      const label = `client.${name}.${method}()`;
      const iterates = call.constructor.name === 'AsyncGeneratorFunction';
      Object.defineProperty(resource, method, {
        configurable: true,
        writable: true,
        value: function (this: unknown, ...args: unknown[]) {
          try {
            checkOptions(label, args[at], known);
            if (query) checkQuery(label, args[query[0]], query[1]);
          } catch (err) {
            if (iterates) throw err;
            return Promise.reject(err);
          }
          return call.apply(this, args);
        },
      });
    }
  }
}
