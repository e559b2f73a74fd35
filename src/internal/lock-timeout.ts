/**
 * Another process kept a file's lock past the wait: a failure to say in words, not a system error.
 * router-cli/kit and router-cli/batch export it: a program gets it from a conversation's store and a job's lock.
 */
export class FileLockTimeout extends Error {
  override name = 'FileLockTimeout';
  readonly code = 'lock_timeout';
}
