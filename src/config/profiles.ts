import Conf from 'conf';
import { chmodSync, existsSync, readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { FileLockTimeout } from '../internal/file-lock.js';
import { withFileLock } from '../internal/with-file-lock.js';
import { clearLeftMoves } from '../internal/lock-mark.js';
import { makeDir } from '../internal/make-dir.js';
import { describeCode, failedWriteOf } from '../internal/system-errors.js';
import { checkNewProfile, DEFAULT_PROFILE, SettingsError, type Profile, type ProfileField, type StoredField } from './fields.js';
import { corrupt, ProfileFile, profilesPath } from './profile-file.js';

interface ConfigShape {
  current: string;
  profiles: Record<string, Profile>;
}

/** Named profiles in one private (0600) JSON file; `ROUTER_CONFIG_DIR` moves it. */
export class ProfileStore {
  private readonly conf: Conf<ConfigShape>;

  /** `env`: the run's environment (HOME and XDG_CONFIG_HOME place the file when `dir` is not given). */
  constructor(dir = process.env.ROUTER_CONFIG_DIR, env: NodeJS.ProcessEnv = process.env) {
    // The one place the file's path is decided (ProfileFile reads the same file without conf).
    const folder = dirname(profilesPath(dir, env));
    try {
      // Made here, private, before conf would make it (its recursive mkdir can spin forever).
      makeDir(folder);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === 'EEXIST' ? 'it is a file, not a folder' : code ? describeCode(code) : (err as Error).message;
      throw new SettingsError(`cannot create the config folder ${folder}: ${why}`);
    }
    // A file conf cannot use is refused before conf sees it: conf would rewrite it (or reset it) first.
    const complete = new ProfileFile(dir, env).complete();
    try {
      const open = () => new Conf<ConfigShape>({
        projectName: 'router',
        cwd: folder,
        configName: 'config',
        configFileMode: 0o600,
        defaults: { current: DEFAULT_PROFILE, profiles: {} },
      });
      // conf writes its defaults into a file that lacks them: a read and a write, as every change.
      this.conf = complete ? open() : withFileLock(profilesPath(dir, env), open);
    } catch (err) {
      // The file was read above: a system error here is conf writing the new file's defaults.
      if (err instanceof FileLockTimeout) throw err;
      throw (err as NodeJS.ErrnoException).code ? failedWriteOf(err, profilesPath(dir, env)) : corrupt(err, profilesPath(dir, env));
    }
  }

  get path(): string {
    return this.conf.path;
  }

  current(): string {
    return this.conf.get('current');
  }

  names(): string[] {
    return Object.keys(this.conf.get('profiles'));
  }

  get(name: string): Profile | undefined {
    return this.conf.get('profiles')[name];
  }

  set(name: string, field: ProfileField, value: string): void {
    this.write(() => {
      const profiles = { ...this.conf.get('profiles') };
      checkNewProfile(name, Object.keys(profiles));
      profiles[name] = { ...profiles[name], [field]: value };
      this.conf.set('profiles', profiles);
    });
  }

  /** Sets and removes (undefined) several fields of a profile in one write: a key moved between the file and the keychain. */
  update(name: string, patch: Partial<Record<StoredField, string | undefined>>): void {
    this.write(() => {
      const profiles = { ...this.conf.get('profiles') };
      checkNewProfile(name, Object.keys(profiles));
      const p: Profile = { ...profiles[name] };
      for (const [field, value] of Object.entries(patch) as [StoredField, string | undefined][]) {
        if (value === undefined) delete p[field];
        else p[field] = value;
      }
      profiles[name] = p;
      this.conf.set('profiles', profiles);
    });
  }

  unset(name: string, field: ProfileField): void {
    this.write(() => {
      const profiles = { ...this.conf.get('profiles') };
      if (!profiles[name]) return;
      const p = { ...profiles[name] };
      delete p[field];
      profiles[name] = p;
      this.conf.set('profiles', profiles);
    });
  }

  use(name: string): void {
    this.write(() => this.conf.set('current', name));
  }

  delete(name: string): boolean {
    return this.write(() => {
      const profiles = { ...this.conf.get('profiles') };
      if (!profiles[name]) return false;
      delete profiles[name];
      this.conf.set('profiles', profiles);
      if (this.current() === name) this.conf.set('current', DEFAULT_PROFILE);
      return true;
    });
  }

  /** What a release killed midway left beside the file: nothing else reads this folder, so a change (rare) does. */
  private clearLeftLocks(): void {
    const folder = dirname(this.conf.path);
    try {
      clearLeftMoves(folder, readdirSync(folder));
    } catch {
      // An unreadable folder: its leftovers stay, as they did.
    }
  }

  /** A read, change and write of the file, one process at a time (src/internal/with-file-lock.ts). */
  private write<T>(change: () => T): T {
    try {
      const result = withFileLock(this.conf.path, change);
      // conf's mode applies on creation; make sure an older file is private too.
      if (existsSync(this.conf.path)) chmodSync(this.conf.path, 0o600);
      this.clearLeftLocks();
      return result;
    } catch (err) {
      throw (err as NodeJS.ErrnoException).code ? failedWriteOf(err, this.conf.path) : err;
    }
  }
}
