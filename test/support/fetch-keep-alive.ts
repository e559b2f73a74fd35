import { Agent } from '../../src/client/undici.js';
import { KEEP_ALIVE } from '../../src/internal/keep-alive.js';

/**
 * node's fetch() in the tests (their calls to the emulator's /_emulator/ and /v1 routes beside the CLI's) lets an
 * idle connection go as the client does (src/internal/keep-alive.ts), not as node's own Agent does: that one keeps it
 * up to the server's hint less 2 s (63 s of `router serve`'s 65 s), on a timer that ticks once a second. At load a test
 * of cli-edges-s61 that made its call ~64 s before the next test's met ECONNRESET: the emulator closed the connection
 * as the call went out on it. Once a worker: its files share the process.
 */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
const TESTS_AGENT = Symbol.for('router.tests.fetchAgent');
const holder = globalThis as { [GLOBAL_DISPATCHER]?: unknown; [TESTS_AGENT]?: InstanceType<typeof Agent> };
holder[TESTS_AGENT] ??= new Agent(KEEP_ALIVE);
holder[GLOBAL_DISPATCHER] = holder[TESTS_AGENT];
