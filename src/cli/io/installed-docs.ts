/**
 * The docs pages (docs/*.md, shipped in the package) by the path a reader can open: help and messages
 * name them as `docs/keys.md`, which means nothing in an installed package's user's folder. The package's
 * folder is the one holding this code's dist/ (a module, or the bundle dist/cli.bundle.cjs) or, in a
 * checkout run from source, src/; worked out from this file's place, with no file looked at.
 */
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The folder of the package this code is part of. */
function packageFolder(): string {
  if (root !== undefined) return root;
  const here = fileURLToPath(import.meta.url).split(sep);
  const at = Math.max(here.lastIndexOf('dist'), here.lastIndexOf('src'));
  root = at > 0 ? here.slice(0, at).join(sep) || sep : dirname(dirname(dirname(here.join(sep))));
  return root;
}

/** `text` with each docs page it names (`docs/keys.md`) given by its absolute path in the package. */
export function withInstalledDocs(text: string): string {
  return text.replace(/(?<![\w./-])docs\/([\w-]+\.md)\b/g, (_, page: string) => join(packageFolder(), 'docs', page));
}
