import type { Command } from 'commander';
import type { Settings } from '../../config/settings.js';

/** The commands that read the embedding model (ROUTER_EMBED_MODEL, a profile's embed_model). */
const EMBEDDING_COMMANDS = new Set(['embed', 'embed-multi', 'similar']);

/**
 * The settings whose environment value goes before the profile's that this command reads: not one a
 * flag typed here replaces (--model, --voice, the conversation's model), nor one it never takes (a
 * voice, a speech model, outside speak; an embedding model outside the commands that embed; the
 * chat model in those and speak). Undefined when none is left.
 */
export function overriddenInUse(overridden: Settings['overridden'], cmd: Command, commandModel: boolean): Settings['overridden'] {
  const typed = (flag: string) => cmd.getOptionValueSource(flag) === 'cli';
  const speaks = cmd.options.some((o) => o.long === '--voice');
  const embeds = EMBEDDING_COMMANDS.has(cmd.name());
  const replaced: Record<string, boolean> = {
    model: commandModel || typed('model') || speaks || embeds,
    speech_model: !speaks || typed('model'),
    embed_model: !embeds || typed('model'),
    voice: !speaks || typed('voice'),
  };
  const left = overridden?.filter((o) => !replaced[o.field]);
  return left?.length ? left : undefined;
}
