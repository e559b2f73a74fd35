import { Argument, type Command } from '../../commander.js';
import { action, runtimeOf } from '../../run.js';
import type { DynamicKind } from './tree.js';

export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description('Print the completion script for bash, zsh or fish, generated from the command tree. Batch ids, profiles, settings and models are looked up as you press Tab.')
    .addArgument(new Argument('<shell>', 'shell').choices(['bash', 'zsh', 'fish']))
    .addHelpText('after', `
Examples:
  $ router completion bash > ~/.local/share/bash-completion/completions/router
  $ router completion zsh > ~/.zfunc/_router
  $ router completion fish > ~/.config/fish/completions/router.fish
(zsh: put fpath+=(~/.zfunc) before compinit in ~/.zshrc)`)
    .action(
      action<Record<string, never>, [string]>(async ({ io, cmd }, shell) => {
        const root = await runtimeOf(cmd).fullProgram!();
        const { bashScript } = await import('./bash.js');
        const { zshScript } = await import('./zsh.js');
        const { fishScript } = await import('./fish.js');
        io.out(shell === 'bash' ? bashScript(root) : shell === 'zsh' ? zshScript(root) : fishScript(root));
      }),
    );
}

const KINDS: readonly DynamicKind[] = ['batch-ids', 'job-ids', 'profiles', 'settings', 'models', 'roles'];

/** `router __complete KIND`: the values a completion script offers, one per line; never an error on stderr. */
export function registerComplete(program: Command): void {
  program
    .command('__complete', { hidden: true })
    .argument('<kind>', KINDS.join(' | '))
    .action(
      action<Record<string, never>, [string]>(async (ctx, kind) => {
        if (!(KINDS as readonly string[]).includes(kind)) return;
        const { candidates } = await import('./candidates.js');
        const values = await candidates(ctx, kind as DynamicKind).catch(() => [] as string[]);
        if (values.length) ctx.io.out(`${values.join('\n')}\n`);
      }),
    );
}
