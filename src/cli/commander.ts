export { Command, Option, Argument, InvalidArgumentError, CommanderError } from 'commander';
