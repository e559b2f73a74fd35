import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { IO } from '../../src/cli/io/io.js';
import { drawsSpinner } from '../../src/cli/io/spinner.js';

/** An IO whose stderr is a terminal of `columns` (undefined: one that does not say) in environment `env`. */
function ioOn(env: NodeJS.ProcessEnv, columns?: number, flags: { quiet?: boolean } = {}): IO {
  const stderr = Object.assign(new PassThrough(), { columns });
  return new IO(flags, { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env, tty: { stderr: true } });
}

describe('where a spinner is drawn', () => {
  it('on a terminal with a width that can move its cursor', () => {
    expect(drawsSpinner(ioOn({ TERM: 'xterm' }, 80))).toBe(true);
    expect(drawsSpinner(ioOn({ TERM: 'xterm', NO_COLOR: '1' }, 80))).toBe(true);
  });

  it('not on TERM=dumb (it cannot clear the line), one of 0 columns, or with --quiet', () => {
    expect(drawsSpinner(ioOn({ TERM: 'dumb' }, 80))).toBe(false);
    expect(drawsSpinner(ioOn({ TERM: 'xterm' }, 0))).toBe(false);
    expect(drawsSpinner(ioOn({ TERM: 'xterm' }, 80, { quiet: true }))).toBe(false);
  });
});
