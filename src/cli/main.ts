import { Command, CommanderError, Option } from 'commander';
import { EXIT } from './exit-codes.js';
import { integerIn, numberIn } from './options.js';
import { registerChat } from './commands/chat.js';
import { registerBatch } from './commands/batch.js';
import { registerResponses } from './commands/responses.js';
import { registerEmbed } from './commands/embed.js';
import { registerSpeak } from './commands/speak.js';
import { registerDecide } from './commands/decide.js';
import { registerConfig, registerLogin } from './commands/config.js';
import { registerServe } from './commands/serve.js';
import { registerCompletion } from './commands/completion.js';
import { VERSION } from '../client/version.js';

export function buildProgram(): Command {
  const program = new Command('router')
    .description('Command line for the Model Routing Service: chat, batches, responses, embeddings, speech and decisions.')
    .version(VERSION, '-V, --version')
    .option('-p, --profile <name>', 'config profile to use (env ROUTER_PROFILE)')
    .option('--api-root <url>', 'API root, e.g. http://127.0.0.1:8080/api (env ROUTER_API_ROOT)')
    .option('--timeout <seconds>', 'per-request timeout in seconds (default 120)', numberIn(0.001, 86_400))
    .option('--max-retries <n>', 'retries of transient failures, 0 to 10 (default 2)', integerIn(0, 10))
    .option('--no-color', 'no colors (also NO_COLOR=1)')
    .option('-q, --quiet', 'no progress or status lines on stderr')
    .option('--verbose', 'more detail on errors: status, request id, error type')
    .addHelpText(
      'after',
      `
Examples:
  $ router serve --port 8080                        # local emulator, prints a key
  $ echo "hi" | router chat --model local/echo
  $ router batch create requests.jsonl --watch
  $ router speak "hello" --voice alloy -o hello.mp3

Exit codes: 0 ok, 1 failure, 2 usage, 3 auth, 4 payment, 5 not found/gone,
6 rate limited, 7 server, 8 network, 9 batch failed, 130 interrupted.`,
    );
  program.configureHelp({ sortSubcommands: false, showGlobalOptions: true });
  program.commandsGroup('Generate:');
  registerChat(program);
  registerResponses(program);
  registerEmbed(program);
  registerSpeak(program);
  registerDecide(program);
  program.commandsGroup('Batches:');
  registerBatch(program);
  program.commandsGroup('Setup:');
  registerLogin(program);
  registerConfig(program);
  registerServe(program);
  registerCompletion(program);
  return program;
}

export { Option };

/** Applies exitOverride to the whole tree so that usage errors exit with EXIT.USAGE. */
function applyExit(cmd: Command): void {
  cmd.exitOverride();
  cmd.configureOutput({
    outputError: (str, write) => write(str.split('\n')[0]! + '\n'),
  });
  for (const sub of cmd.commands) applyExit(sub);
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  applyExit(program);
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    // A closed pipe (router chat | head -1) is not an error of ours.
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      const ok = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help';
      process.exitCode = ok ? EXIT.OK : EXIT.USAGE;
      return;
    }
    const { reportError } = await import('./errors.js');
    const { IO } = await import('./io.js');
    process.exitCode = reportError(err, new IO());
  }
}
