/** `router completion <shell>`: a script generated from the command tree; `router __complete KIND`: its lookups. */
import { defineCommand } from '../../define.js';
import { runtimeOf } from '../../run.js';
import { DYNAMIC_KINDS as KINDS, type DynamicKind } from '../../flags/flags.js';

export const completion = defineCommand({
  name: 'completion',
  summary: 'print a shell completion script',
  description: 'Print the completion script for bash, zsh or fish, generated from the command tree. Batch ids, key hashes (with a management key), profiles, settings and models (aliases too, from their file) are looked up as you press Tab.',
  args: [{ name: '<shell>', help: 'shell', choices: ['bash', 'zsh', 'fish'] }],
  notes: 'zsh reads ~/.zfunc once ~/.zshrc has fpath+=(~/.zfunc) before compinit.',
  examples: [
    // The folders may not be there yet (a fresh home has none of them).
    'mkdir -p ~/.local/share/bash-completion/completions && \\\nrouter completion bash > ~/.local/share/bash-completion/completions/router',
    'mkdir -p ~/.zfunc && router completion zsh > ~/.zfunc/_router',
    'mkdir -p ~/.config/fish/completions && \\\nrouter completion fish > ~/.config/fish/completions/router.fish',
  ],
  run: async ({ io, cmd }, shell) => {
    const root = await runtimeOf(cmd).fullProgram!();
    const { bashScript } = await import('./bash.js');
    const { zshScript } = await import('./zsh.js');
    const { fishScript } = await import('./fish.js');
    io.out(shell === 'bash' ? bashScript(root) : shell === 'zsh' ? zshScript(root) : fishScript(root));
  },
});

/** The values a completion script offers, one per line; never an error on stderr (so no choices: a wrong KIND prints nothing). */
export const complete = defineCommand({
  name: '__complete',
  summary: '',
  hidden: true,
  args: [{ name: '<kind>', help: KINDS.join(' | ') }],
  run: async (ctx, kind) => {
    if (!(KINDS as readonly string[]).includes(kind)) return;
    const { candidates } = await import('./candidates.js');
    const values = await candidates(ctx, kind as DynamicKind).catch(() => [] as string[]);
    if (values.length) ctx.io.out(`${values.join('\n')}\n`);
  },
});
