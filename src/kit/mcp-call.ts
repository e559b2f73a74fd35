/**
 * One call of an MCP server's tool, as the server runs it: answered at once, or, for a tool whose
 * `execution.taskSupport` is `required`, as a task polled to its end (a plain `tools/call` of such a
 * tool is refused). The server's progress notifications and a task's status words go to `progress`.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ToolProgress } from './tool.js';

export async function callMcpTool(client: Client, params: { name: string; arguments: Record<string, unknown> }, opts: { signal: AbortSignal; timeout: number }, progress?: (update: ToolProgress) => void): Promise<Record<string, unknown>> {
  const onprogress = progress && ((p: { progress: number; total?: number; message?: string }) => progress({ progress: p.progress, ...(p.total === undefined ? {} : { total: p.total }), ...(p.message ? { message: p.message } : {}) }));
  for await (const m of client.experimental.tasks.callToolStream(params, undefined, { ...opts, ...(onprogress ? { onprogress } : {}) })) {
    if (m.type === 'result') return m.result as Record<string, unknown>;
    if (m.type === 'error') throw m.error;
    if (m.task.statusMessage) progress?.({ message: m.task.statusMessage });
  }
  throw new Error(`the call of ${params.name} ended without a result`);
}
