import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { withInstalledDocs } from '../../src/cli/io/installed-docs.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

it('names a docs page by its path in the package, and leaves other paths alone', () => {
  expect(withInstalledDocs('See docs/keys.md.')).toBe(`See ${join(ROOT, 'docs', 'keys.md')}.`);
  expect(existsSync(withInstalledDocs('docs/real-service-batches.md'))).toBe(true);
  expect(withInstalledDocs('(docs/gateway.md); and /srv/docs/x.md, mydocs/y.md, ./docs/z.md')).toBe(`(${join(ROOT, 'docs', 'gateway.md')}); and /srv/docs/x.md, mydocs/y.md, ./docs/z.md`);
});
