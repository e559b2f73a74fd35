/**
 * Says once a worker why tests skip: a missing tool (tmux, a shell) or right (mounting a tmpfs), and how to have it.
 * A bare skipIf showed only a count of skipped tests, with nothing saying which tool was missing.
 */
const said = new Set<string>();
export function sayWhySkipped(missing: boolean, why: string): boolean {
  if (missing && !said.has(why)) {
    said.add(why);
    process.stderr.write(`skipped: ${why}\n`);
  }
  return missing;
}
