// The reference MCP server (@modelcontextprotocol/server-everything) over HTTP, as its own process on a free port.
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { until } from './until.js';
import { childPort } from './upstreams.js';

/** server-everything's entry point, run with a transport's name ('stdio', 'sse', 'streamableHttp'). */
export const EVERYTHING = join(resolve(import.meta.dirname, '..', '..'), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** What server-everything says on stderr once it listens, by transport. */
const READY = { sse: 'running on port', streamableHttp: 'listening' } as const;


/** Starts server-everything over `transport` and resolves once it listens (within the hook's bound): its process and origin. */
export async function everythingOverHttp(transport: keyof typeof READY): Promise<{ server: ChildProcess; origin: string }> {
  const port = await childPort();
  const server = spawn(process.execPath, [EVERYTHING, transport], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  server.stderr!.on('data', (b: Buffer) => (said += b));
  // Within the hook's bound, not 50 s of its own: a time a loaded machine can pass starting a server.
  expect(await until(() => said.includes(READY[transport])), said).toBe(true);
  return { server, origin: `http://127.0.0.1:${port}` };
}
