import type { Command } from 'commander';
import type { Settings } from '../../config/settings.js';

/** The commands that read the embedding model (ROUTER_EMBED_MODEL, a profile's embed_model). */
const EMBEDDING_COMMANDS = new Set(['embed', 'embed-multi', 'similar']);

/** The commands that read the default chat model (ROUTER_MODEL, a profile's model) when no --model is given. */
const CHAT_MODEL_COMMANDS = new Set(['chat', 'responses', 'batch create', 'batch run']);

const pathOf = (cmd: Command) => {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
};

/** Whether the command takes the default model: the others (credits, models, keys…) neither check nor mention it. */
export const readsDefaultModel = (cmd: Command) => CHAT_MODEL_COMMANDS.has(pathOf(cmd));

/**
 * The settings whose environment value goes before the profile's that this command reads: not one a
 * flag typed here replaces (--model, --voice, the conversation's model), nor one it never takes (a
 * voice, a speech model, outside speak; an embedding model outside the commands that embed; the
 * chat model outside the commands that chat). Undefined when none is left.
 */
export function overriddenInUse(overridden: Settings['overridden'], cmd: Command, commandModel: boolean): Settings['overridden'] {
  const typed = (flag: string) => cmd.getOptionValueSource(flag) === 'cli';
  const speaks = cmd.options.some((o) => o.long === '--voice');
  const embeds = EMBEDDING_COMMANDS.has(cmd.name());
  const replaced: Record<string, boolean> = {
    model: commandModel || typed('model') || !readsDefaultModel(cmd),
    speech_model: !speaks || typed('model'),
    embed_model: !embeds || typed('model'),
    voice: !speaks || typed('voice'),
  };
  const left = overridden?.filter((o) => !replaced[o.field]);
  return left?.length ? left : undefined;
}
