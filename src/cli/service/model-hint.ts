import type { RouterClient } from '../../client/index.js';
import { APIError } from '../../client/errors.js';
import { closest } from '../../internal/did-you-mean.js';
import { sourceName, type Settings, type Source } from '../../config/settings.js';

/** A refused id: no model at all, or (said by `router serve`) a model of another kind. */
const UNKNOWN_MODEL = /^(\S+) is (?:not a valid model ID|(an? \w+ model), not )/;

/** The known id nearest to a mistyped one (not the id itself), if it is near enough to be the one meant. */
export function nearestModel(id: string, known: string[]): string | undefined {
  return closest(id, known.filter((k) => k !== id), Math.max(2, Math.floor(id.length / 4)));
}

/**
 * A model id the model list of `root` does not hold, said with the nearest id and "set all the same": read from
 * the copy `router models` keeps, only when it is fresh (nothing is sent; without one, nothing is said).
 */
export async function unlistedNote(env: NodeJS.ProcessEnv, id: string, root: string): Promise<string | undefined> {
  const ids = (await import('./model-catalog.js')).cachedModels(env, root)?.map((m) => m.id);
  if (!ids || ids.includes(id)) return undefined;
  const near = nearestModel(id, ids);
  return `note: ${id} is not in the model list of ${root}${near ? ` (did you mean ${near}?)` : ''}; set all the same`;
}

/**
 * A refused model id gets a suggestion from the service's model list ("did you mean …?"), the copy
 * `router models` keeps when fresh; looked up only after the refusal, briefly; without an answer the error stays as it was.
 */
export async function addModelHint(err: unknown, connect: () => Promise<{ client: RouterClient; settings: { apiRoot?: string } }>, env: NodeJS.ProcessEnv, used?: { settings: Settings; typed: boolean }): Promise<void> {
  if (!(err instanceof APIError) || err.status !== 400) return;
  const [, id, kindSaid] = UNKNOWN_MODEL.exec(err.said) ?? [];
  if (!id) return;
  // A model the user did not type (ROUTER_MODEL, a profile, a role, a conversation) is named by where it came from.
  const from = used && !used.typed ? modelSource(id, used.settings) : undefined;
  const said = from ? `from ${sourceName(from)}; ` : '';
  if (from) Object.assign(err, { hint: ` (from ${sourceName(from)})` });
  let models: { id: string; architecture?: { output_modalities?: unknown } }[] | undefined;
  try {
    const { client, settings } = await connect();
    const { modelCatalog } = await import('./model-catalog.js');
    const { DEFAULT_API_ROOT } = await import('../../client/core.js');
    models = await modelCatalog(client, { env, apiRoot: settings.apiRoot ?? DEFAULT_API_ROOT, signal: AbortSignal.timeout(3000) }).catch(() => undefined);
    await client.close();
  } catch {
    return;
  }
  if (!models) return;
  // Listed, yet refused: a model of another kind (an embedding model asked to chat).
  const other = otherCommand(models.find((m) => m.id === id)?.architecture?.output_modalities, err.request);
  // The service may have named the kind already: then only the command that takes it is added.
  if (other) return void Object.assign(err, { hint: ` (${said}${kindSaid && other.startsWith(kindSaid) ? other.slice(kindSaid.length + 2) : `it is ${other}`})` });
  const near = nearestModel(id, models.map((m) => m.id));
  Object.assign(err, { hint: near ? ` (${said}did you mean ${near}? The list: router models)` : ` (${said}the list: router models)` });
}

/** Where a model id the user did not type came from: the environment, a profile, a role, a conversation. */
function modelSource(id: string, settings: Settings): Source | undefined {
  const key = (['model', 'embedModel', 'speechModel'] as const).find((k) => settings[k] === id && settings.from[k]?.kind !== 'flag');
  return key && settings.from[key];
}

/** For a listed model refused where it was sent: the kind it is and the command that takes it (none when it is not known). */
function otherCommand(outputs: unknown, request: string | undefined): string | undefined {
  if (!Array.isArray(outputs) || !request) return undefined;
  const kinds: [string, string, RegExp][] = [
    ['embeddings', 'an embedding model: router embed takes it', /\/embeddings$/],
    ['speech', 'a speech model: router speak takes it', /\/audio\/speech$/],
    ['text', 'a chat model: router chat or router responses takes it', /\/(chat\/completions|responses)$/],
  ];
  const kind = kinds.find(([output]) => outputs.includes(output));
  return kind && !kind[2].test(request.split('?')[0]!) && !/\/decisions$/.test(request) ? kind[1] : undefined;
}
