import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The sequence numbers (`s`) of the charges the journal segments in `dir` hold now; a line being written is skipped. */
function journalSeqs(dir: string): number[] {
  return readdirSync(dir)
    .filter((n) => /^charges\.\d+\.jsonl$/.test(n))
    .flatMap((n) => {
      let text: string;
      try {
        text = readFileSync(join(dir, n), 'utf8');
      } catch {
        return []; // deleted by a save meanwhile
      }
      return text.split('\n').flatMap((line) => {
        try {
          return [(JSON.parse(line) as { s: number }).s];
        } catch {
          return [];
        }
      });
    });
}

/**
 * Looks at the charges journal while charges come and timed saves end, and says where it holds a charge that a save
 * has taken. How long a save takes depends on the machine's load, so how many charges come during one does too: what
 * is sound is which charges are gone. A charge on disk at a look when `j` timed saves had ended was appended before the
 * snapshot of save j+2 (begun once save j+1 ended), and that save removes its segment before save j+3 begins: once
 * j+3 saves have ended it is gone. (Before: the journal was never emptied while charges came during every save.)
 */
export class JournalSaves {
  /** newest[j]: the newest charge on disk at the last look made when j timed saves had ended. */
  private readonly newest: number[] = [];
  constructor(private readonly dir: string) {}

  /** Looks at the journal now, with `saves` timed saves ended; what it holds that it should not, if anything. */
  look(saves: number): string | undefined {
    const seqs = journalSeqs(this.dir);
    const taken = Math.max(0, ...this.newest.slice(0, Math.max(0, saves - 2)).filter((n) => n !== undefined));
    const oldest = Math.min(...seqs);
    this.newest[saves] = Math.max(this.newest[saves] ?? 0, ...seqs);
    return oldest <= taken ? `with ${saves} timed saves ended, the journal still holds charge ${oldest}, seen when ${saves - 3} or fewer had` : undefined;
  }
}
