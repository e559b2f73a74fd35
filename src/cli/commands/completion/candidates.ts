import { PROFILE_FIELDS } from '../../../config/fields.js';
import { fromEnv } from '../../../config/settings.js';
import type { RunContext } from '../../run.js';
import type { DynamicKind } from './tree.js';
import type { Model } from '../../../client/resources/models.js';
import { configuredModels, modelAsk, offeredModels } from './model-candidates.js';

/** A completion waits at most this long for the service in all (a body that trickles in included), with no retries. */
const TIMEOUT_S = 3;

async function profileFile(ctx: RunContext<unknown>) {
  const { ProfileFile } = await import('../../../config/profile-file.js');
  return new ProfileFile(ctx.env.ROUTER_CONFIG_DIR, ctx.env);
}

export async function candidates(ctx: RunContext<unknown>, kind: DynamicKind): Promise<string[]> {
  if (kind === 'settings') return [...PROFILE_FIELDS];
  if (kind === 'profiles') return (await profileFile(ctx)).names();
  if (kind === 'roles') return (await import('../../saved/roles.js')).roleNames(ctx.env);
  const aliases = async () => (await import('../../../kit/model-aliases.js')).readAliases(ctx.env);
  if (kind === 'aliases') return Object.keys(await aliases()).sort();
  if (kind === 'collections') return (await (await import('../collections/send.js')).collectionsOf(ctx)).list().map((c) => c.name);
  if (kind === 'conversations') return (await import('../../saved/conversations.js')).findConversationIds(ctx.env).sort();
  if (kind === 'job-ids') return (await import('../../../batch/job/store.js')).listJobs(ctx.env).map((j) => j.id);
  const flags = { ...ctx.flags, timeout: TIMEOUT_S, maxRetries: 0 };
  const signal = AbortSignal.timeout(TIMEOUT_S * 1000);
  const { connect } = await import('../../context.js');
  // Models: the aliases (read from their file, never from the service; not where only an id is taken), the configured ids, then the service's list.
  const ask = modelAsk(kind);
  const named = ask?.aliases ? await aliases().catch(() => ({})) : {};
  const profiles = await profileFile(ctx).then((f) => f.names().map((n) => f.get(n) ?? {})).catch(() => []);
  const configured = ask ? configuredModels(ask, profiles, (name) => fromEnv(ctx.env, name)) : [];
  const settings = await ctx.settings().catch(() => undefined);
  if (!settings) return ask ? offeredModels(ask, named, configured) : [];
  const { DEFAULT_API_ROOT } = await import('../../../client/core.js');
  const root = settings.apiRoot ?? DEFAULT_API_ROOT;
  // A Tab never reads a key: one that is not at hand with the settings (a key command's, a password manager's;
  // the keychain's, a native call that a locked keyring answers with a prompt) is left where it is, and what
  // is known without the service completes instead. Only a key the settings already hold is sent.
  const notAtHand = (which: 'apiKey' | 'managementKey') => settings[which] === undefined;
  // The workspace's keys (a management key's): their hashes, of the first page as the service gives it.
  if (kind === 'key-hashes') {
    // Without one, connect would send the API key (refused there): its key command run on a Tab, a wait for nothing.
    if (!settings.from.managementKey || notAtHand('managementKey')) return [];
    const { client } = await connect(ctx.io, flags, settings, { management: true });
    try {
      return (await client.keys.list({}, { signal })).map((k) => k.hash);
    } finally {
      await client.close();
    }
  }
  const made = async () => (await import('../../../batch/local-index.js')).indexedBatches(ctx.env, root).slice(0, 50).map((b) => b.id);
  if (kind === 'batch-ids' && notAtHand('apiKey')) return made();
  if (kind === 'batch-ids') {
    const { client } = await connect(ctx.io, flags, settings);
    try {
      return (await client.batches.list({ limit: 50 }, { signal })).data.map((b) => b.id);
    } catch (err) {
      // No listing at this service: the batches made from this machine.
      if (!(await import('../../../client/resources/batches.js')).isNoListing(err)) throw err;
      return made();
    } finally {
      await client.close();
    }
  }
  if (!ask) return [];
  const { cachedModels, modelCatalog } = await import('../../service/model-catalog.js');
  // The list as last kept, however old.
  if (notAtHand('apiKey')) return offeredModels(ask, named, configured, cachedModels(ctx.env, root, Date.now(), Infinity));
  let listed: Model[] | undefined;
  try {
    const { client } = await connect(ctx.io, flags, settings);
    try {
      // The list `router models` keeps, fetched only when it is not fresh.
      listed = await modelCatalog(client, { env: ctx.env, apiRoot: root, signal });
    } finally {
      await client.close();
    }
  } catch {
    /* offline or no key: the configured models still complete */
  }
  return offeredModels(ask, named, configured, listed);
}
