/**
 * A small JSON object kept in the config folder beside config.json (aliases.json, model-options.json):
 * read whole, changed under its lock and written whole (src/internal/write-whole.ts), so that two
 * processes changing it take turns and one killed midway leaves the old or the new file.
 */
import { dirname, join } from 'node:path';
import { profilesPath } from '../config/profile-file.js';
import { withFileLock } from '../internal/with-file-lock.js';
import { readLocalText } from '../internal/local-file.js';
import { makeDir } from '../internal/make-dir.js';
import { isRecord } from '../internal/shape.js';
import { keptFileWhy } from '../internal/named-input.js';
import { writeWhole } from '../internal/write-whole.js';
import { ConfigFileError } from './errors.js';

export { ConfigFileError };

/** The path of `name` in the config folder (ROUTER_CONFIG_DIR, else XDG's: the folder of config.json). */
export function configFilePath(env: NodeJS.ProcessEnv, name: string): string {
  return join(dirname(profilesPath(env.ROUTER_CONFIG_DIR, env)), name);
}

/** The object the file holds, each value checked by `valid`; {} when there is no file yet. */
export function readConfigObject<T>(path: string, valid: (value: unknown) => value is T): Record<string, T> {
  let text: string;
  try {
    text = readLocalText(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    throw new ConfigFileError('unreadable', path, code ? keptFileWhy(code) : `cannot read it (${(err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigFileError('damaged', path, `not valid JSON: ${(err as Error).message}`);
  }
  if (!isRecord(parsed)) throw new ConfigFileError('damaged', path, 'not a JSON object');
  const bad = Object.entries(parsed).find(([, v]) => !valid(v));
  if (bad) throw new ConfigFileError('damaged', path, `"${bad[0]}" holds a value of another kind`);
  return parsed as Record<string, T>;
}

/** Reads, changes and writes the object whole, one process at a time; returns what `change` returns. */
export function changeConfigObject<T, R>(path: string, valid: (value: unknown) => value is T, change: (object: Record<string, T>) => R): R {
  makeDir(dirname(path));
  return withFileLock(path, () => {
    const object = readConfigObject(path, valid);
    const result = change(object);
    writeWhole(path, `${JSON.stringify(object, null, 2)}\n`);
    return result;
  });
}
