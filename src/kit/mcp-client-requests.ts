/**
 * What an MCP server may ask of router: its roots (the folders it may work in), a model's answer
 * (sampling) and the user's input (elicitation). Each is offered only when its answer is given: the
 * server sees the capability, and tools that need it (server-everything's `trigger-sampling-request`).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CreateMessageRequestParams, CreateMessageResult, ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { PlainHttpInfo } from '../client/credentials.js';

export type SamplingRequest = CreateMessageRequestParams;
export type SamplingResult = CreateMessageResult;
export type ElicitationRequest = ElicitRequestFormParams;
export type ElicitationResult = ElicitResult;

/** Why router does not answer a server's request, as the server is told (an MCP error) and the caller says it. */
export class McpRequestRefused extends Error {}

export interface McpClientAnswers {
  /**
   * The folders the server may work in, offered as its roots (`file://` URIs); absent or empty: roots are not offered. Not the
   * current directory by default: server-filesystem replaces the folders on its command line with a client's roots.
   */
  roots?: string[] | undefined;
  /** Answers a server's `sampling/createMessage` (a model's answer); without it, sampling is not offered. Throw McpRequestRefused to refuse. */
  sample?: ((request: SamplingRequest, server: string, signal: AbortSignal) => Promise<SamplingResult>) | undefined;
  /** Answers a server's `elicitation/create` (form mode); without it, elicitation is not offered. */
  elicit?: ((request: ElicitationRequest, server: string, signal: AbortSignal) => Promise<ElicitationResult>) | undefined;
  /** Told before a server's URL sends its user and password over plain http:// to a host not this machine (unencrypted). */
  onPlainHttp?: ((info: PlainHttpInfo) => void) | undefined;
}

/** The roots as the server is given them: each folder as an absolute `file://` URI, named by its last part. */
export function mcpRoots(folders: string[]): { uri: string; name: string }[] {
  return folders.map((f) => {
    const path = resolve(f);
    return { uri: pathToFileURL(path).href, name: path.split('/').filter(Boolean).pop() ?? '/' };
  });
}

/** The capabilities a client with these answers declares. */
export function clientCapabilities(answers: McpClientAnswers): Record<string, object> {
  return { ...(answers.roots?.length ? { roots: {} } : {}), ...(answers.sample ? { sampling: {} } : {}), ...(answers.elicit ? { elicitation: { form: {} } } : {}) };
}

/**
 * An error the SDK answers a server's request with: `code`, and `message` as the JSON-RPC error's message. Not the SDK's
 * McpError, whose message already begins `MCP error CODE: `: the server's SDK adds that again to what it reads.
 */
function answerError(code: number, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
}

/** Answers the server's requests on `client` (made with `clientCapabilities(answers)`); `server()` names it once it is known. */
export async function answerServerRequests(client: Client, answers: McpClientAnswers, server: () => string): Promise<void> {
  const { ListRootsRequestSchema, CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode } = await import('@modelcontextprotocol/sdk/types.js');
  const refusal = (err: unknown) => (err instanceof McpRequestRefused ? answerError(ErrorCode.InvalidRequest, err.message) : err);
  const roots = answers.roots?.length ? mcpRoots(answers.roots) : undefined;
  if (roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
  const { sample, elicit } = answers;
  if (sample) {
    client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => {
      if (req.params.tools?.length) throw answerError(ErrorCode.InvalidParams, 'router does not offer tools to a sampling request');
      return sample(req.params, server(), extra.signal).catch((err: unknown) => Promise.reject(refusal(err)));
    });
  }
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
      if (req.params.mode === 'url') throw answerError(ErrorCode.InvalidParams, 'router does not open URLs for a server');
      return elicit(req.params, server(), extra.signal).catch((err: unknown) => Promise.reject(refusal(err)));
    });
  }
}
