/**
 * A keychain call on the D-Bus session of an environment that is not this process's. The binding (libdbus) reads
 * DBUS_SESSION_BUS_ADDRESS from the process's own environment, once: a program's `env` (clientFromProfile's, a
 * command's) would be read for every variable but this one, and setting it in process.env is a change the library
 * never makes. So the call runs in a node child of that environment, the secret on its stdin or stdout, never in argv.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

export type KeychainCall = { op: 'get' } | { op: 'set'; secret: string } | { op: 'delete' };

/** The child: the binding's path, the service and the account in argv; its answer, or its error's messages (each cause's), as JSON. */
const CHILD = `
const { AsyncEntry } = require(process.argv[1]);
const [, , op, service, account] = process.argv;
let input = '';
process.stdin.setEncoding('utf8').on('data', (c) => (input += c)).on('end', async () => {
  let answer;
  try {
    const e = new AsyncEntry(service, account, { linux: { store: 'secret-service' } });
    const value = op === 'get' ? await e.getPassword() : op === 'set' ? await e.setPassword(input) : await e.deleteCredential();
    answer = { value: value ?? null };
  } catch (err) {
    const messages = [];
    for (let e = err; e && typeof e === 'object' && messages.length < 8; e = e.cause) messages.push(String(e.message));
    answer = { error: messages };
  }
  process.stdout.write(JSON.stringify(answer));
});
`;

/** An error of the binding, rebuilt from the child's messages with its causes, as the binding threw it. */
function rebuilt(messages: string[]): Error {
  return messages.reduceRight<Error | undefined>((cause, message) => new Error(message, cause ? { cause } : undefined), undefined) ?? new Error('the keychain failed');
}

/**
 * The answer of `call` on `account` of `service`, by the binding in a child run with `env` (its NODE_OPTIONS left out:
 * no loader of the program's); the binding's error as the binding's, an Error of why when the child gives no answer.
 */
export async function keychainInChild(service: string, account: string, call: KeychainCall, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string | boolean | undefined> {
  const binding = createRequire(import.meta.url).resolve('@napi-rs/keyring');
  const childEnv = { ...env, NODE_OPTIONS: undefined };
  const child = spawn(process.execPath, ['-e', CHILD, binding, call.op, service, account], { env: childEnv, stdio: ['pipe', 'pipe', 'pipe'], signal });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  child.stdin.on('error', () => undefined);
  child.stdin.end(call.op === 'set' ? call.secret : '');
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  signal?.throwIfAborted();
  let answer: { value?: string | boolean | null; error?: string[] } | undefined;
  try {
    answer = JSON.parse(Buffer.concat(out).toString('utf8')) as typeof answer;
  } catch {
    answer = undefined;
  }
  if (answer?.error) throw rebuilt(answer.error);
  if (!answer || !('value' in answer)) {
    const said = Buffer.concat(err).toString('utf8').trim().split('\n').pop() ?? '';
    throw new Error(`the keychain binding ended without an answer (exit ${code ?? 'by a signal'})${said ? `: ${said}` : ''}`);
  }
  return answer.value ?? undefined;
}
