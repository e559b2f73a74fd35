import { checkOptions, optionNames } from './option-names.js';
import type { AnsweringOptions, CallOptions } from './resources/shared.js';
import type { Activity } from './resources/activity.js';
import type { Batches } from './resources/batches.js';
import type { Chat } from './resources/chat.js';
import type { Credits } from './resources/credits.js';
import type { Decisions } from './resources/decisions.js';
import type { Embeddings } from './resources/embeddings.js';
import type { Generations } from './resources/generations.js';
import type { Key } from './resources/key.js';
import type { Keys } from './resources/keys.js';
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
const MODELS = optionNames<NonNullable<Parameters<Models['list']>[0]>>()({ signal: 1, timeoutMs: 1, sessionId: 1, routerMetadata: 1, headers: 1, outputModalities: 1 });

/**
 * Every public call of every resource: where among its arguments its options come, and their names (null: it takes
 * none). The type makes a new call a row here too; `guardCalls` checks each call's options from this one table.
 */
export const RESOURCE_CALLS = {
  chat: { create: [1, ANSWERING], stream: [1, CALL], streamText: [1, CALL] },
  batches: { url: null, create: [1, CALL], createStreaming: [2, CALL], list: [1, CALL], listAll: [1, CALL], get: [1, CALL], getStreaming: [2, CALL] },
  responses: { create: [1, ANSWERING], stream: [1, CALL] },
  embeddings: { create: [1, ANSWERING] },
  speech: { create: [1, CALL] },
  decisions: { create: [1, ANSWERING] },
  models: { list: [0, MODELS] },
  key: { get: [0, CALL] },
  keys: { list: [1, CALL], create: [1, CALL], get: [1, CALL], update: [2, CALL], delete: [1, CALL], current: [0, CALL] },
  activity: { list: [1, CALL] },
  credits: { get: [0, CALL] },
  raw: { send: [1, CALL] },
  generations: { get: [1, CALL], content: [1, CALL], feedback: [1, CALL] },
} as const satisfies { [R in keyof Resources]: { [M in CallsOf<Resources[R]>]: readonly [number, readonly string[]] | null } };

/**
 * Each listed call of `resources` checks its options first (`checkOptions`): a promise's call answers a refusal as a
 * rejected promise, as its other failures; a page iterator's (`listAll`) throws it when called.
 */
export function guardCalls(resources: Resources): void {
  for (const [name, calls] of Object.entries(RESOURCE_CALLS)) {
    const resource = resources[name as keyof Resources] as unknown as Record<string, (...args: unknown[]) => unknown>;
    for (const [method, spec] of Object.entries(calls)) {
      if (!spec) continue;
      const [at, known] = spec;
      const call = resource[method]!;
      const label = `client.${name}.${method}()`;
      const iterates = call.constructor.name === 'AsyncGeneratorFunction';
      Object.defineProperty(resource, method, {
        configurable: true,
        writable: true,
        value: function (this: unknown, ...args: unknown[]) {
          try {
            checkOptions(label, args[at], known);
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
