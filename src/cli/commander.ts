import type * as CommanderModule from 'commander';
import { requireDeferring } from '../internal/deferred-require.js';

/**
 * commander, loaded with require: it is CommonJS, and importing it as ESM costs the CLI
 * about 8 ms more at every start (the ESM loader has to scan its exports). It loads
 * node:child_process at start for executable subcommands, which router has none of (~7 ms).
 */
const commander = requireDeferring<typeof CommanderModule>(import.meta.url, 'commander', { 'node:child_process': 'object' });

export const { Command, Option, Argument, InvalidArgumentError, CommanderError } = commander;
export type Command = CommanderModule.Command;
export type Option = CommanderModule.Option;
