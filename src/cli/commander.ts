import type * as CommanderModule from 'commander';
import { requireDependency } from '../internal/deferred-require.js';

/**
 * commander, loaded with require: it is CommonJS, and importing it as ESM costs the CLI
 * about 8 ms more at every start (the ESM loader has to scan its exports).
 */
const commander = requireDependency<typeof CommanderModule>('commander');

export const { Command, Option, Argument, InvalidArgumentError, CommanderError } = commander;
export type Command = CommanderModule.Command;
export type Option = CommanderModule.Option;
