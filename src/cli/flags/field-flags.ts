/**
 * A refusal of the service names the request's field (`max_completion_tokens (999999) exceeds …`);
 * the user typed a flag (`--max-tokens`). The message is said with the flag, where the user gave one.
 */
import type { Command } from '../commander.js';
import { APIError, ValidationError } from '../../client/errors.js';

/** Fields whose flag is not their name in kebab case. */
const ALIASES: Record<string, string> = {
  max_completion_tokens: '--max-tokens',
  max_output_tokens: '--max-tokens',
  max_tokens: '--max-tokens',
  session_id: '--session',
  'reasoning.effort': '--reasoning-effort',
  service_tier: '--service-tier',
};

/** The flags that may have set a field: its alias, and its own name in kebab case (--max-output-tokens). */
const flagsOf = (field: string) => [ALIASES[field], `--${field.replace(/[._]/g, '-')}`].filter((f): f is string => f !== undefined);

/** Rewrites the fields an API error names into the flags the user typed for them (in `argv`). */
export function nameFlags(err: unknown, cmd: Command, argv: readonly string[]): void {
  if (!(err instanceof ValidationError || (err instanceof APIError && err.status < 500))) return;
  const own = new Set(cmd.options.map((o) => o.long));
  const typed = (flag: string) => own.has(flag) && argv.some((a) => a === flag || a.startsWith(`${flag}=`));
  // Only names with "_" or ".": a plain word ("model", "temperature") reads the same either way.
  const message = err.message.replace(/\b[a-z]+(?:[._][a-z]+)+\b/g, (field: string) => flagsOf(field).find(typed) ?? field);
  if (message !== err.message) Object.defineProperty(err, 'message', { value: message, configurable: true, writable: true });
}
