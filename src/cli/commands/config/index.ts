import type { Command } from '../../commander.js';
import { action } from '../../run.js';
import { FIELDS, type ProfileOpt } from './shared.js';
import { runDelete, runGet, runList, runPath, runSet, runUse } from './run.js';
import { registerConfigInit } from './init.js';

export { registerLogin } from './login.js';

export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description('Manage named profiles. Keys are stored in a private (0600) file and are never printed in full.')
    .addHelpText(
      'after',
      `
Settings: ${FIELDS.join(', ')}
Precedence: flags (--profile, --api-root, --model, --voice) > environment (ROUTER_PROFILE,
ROUTER_API_KEY, ROUTER_MANAGEMENT_KEY, ROUTER_API_ROOT, ROUTER_MODEL, ROUTER_VOICE,
ROUTER_SPEECH_MODEL, ROUTER_EMBED_MODEL) > the profile. model is chat's and responses';
speak takes voice and speech_model, embed takes embed_model.

Examples:
  $ router config set api_root "$ROUTER_API_ROOT"
  $ router config set api_key < key.txt
  $ router config set voice alloy
  $ router config list --json`,
    );

  registerConfigInit(config);

  config
    .command('set')
    .description('set a setting of a profile; a key is read from stdin (or a hidden prompt) when VALUE is left out')
    .argument('<setting>', FIELDS.join(' | '))
    .argument('[value]', 'the value (leave out for keys)')
    .option('-p, --profile <name>', 'profile (default: the current one)')
    .addHelpText('after', '\nExamples:\n  $ router config set model local/lorem\n  $ printf %s "$ROUTER_API_KEY" | router config set api_key --profile work')
    .action(action<ProfileOpt, [string, string | undefined]>(runSet));

  config
    .command('get')
    .description('print one setting (keys masked)')
    .argument('<setting>', FIELDS.join(' | '))
    .option('-p, --profile <name>', 'profile (default: the current one)')
    .option('--json', 'print {"profile", "setting", "value"}')
    .action(action<ProfileOpt, [string]>(runGet));

  config
    .command('list')
    .description('list profiles (keys masked); * marks the current one')
    .option('--json', 'print the profiles as JSON')
    .action(action<ProfileOpt>(runList));

  config
    .command('use')
    .description('make a profile the current one')
    .argument('<profile>')
    .action(action<ProfileOpt, [string]>(runUse));

  config
    .command('delete')
    .description('delete a profile')
    .argument('<profile>')
    .action(action<ProfileOpt, [string]>(runDelete));

  config
    .command('path')
    .description('print where the config file is')
    .action(action(runPath));
}

