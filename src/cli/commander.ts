export { Command, Option, Argument, InvalidArgumentError, CommanderError, Help } from 'commander';
