/**
 * What an MCP server sent that the SDK's schemas refused (a zod error, whose message is its issues as a JSON dump of
 * many lines), as one line saying what was expected: a JSON-RPC 2.0 message, or the result a step of MCP has.
 */
export function notMcp(err: unknown, step: string): string | undefined {
  const issues = (err as { issues?: unknown } | undefined)?.issues ?? wrappedIssues(err);
  if (!Array.isArray(issues) || !issues.length) return undefined;
  const first = issues[0] as { code?: unknown; path?: unknown; message?: unknown };
  const path = Array.isArray(first.path) ? first.path.map(String) : [];
  if (first.code === 'invalid_union' && !path.length) return 'answered JSON that is not MCP (a JSON-RPC 2.0 message was expected)';
  const said = typeof first.message === 'string' ? first.message.replace(/^Invalid input: /, '') : 'not as MCP has it';
  const more = issues.length > 1 ? `; and ${issues.length - 1} more` : '';
  return `answered ${step} with a result that is not MCP's (${path.join('.') || 'the result'}: ${said}${more})`;
}

/** The SDK's check of a call's result comes wrapped as an internal MCP error (-32603) whose message is the dump. */
function wrappedIssues(err: unknown): unknown {
  const dump = /^MCP error -32603: (\[[\s\S]*\])$/.exec((err as Error | undefined)?.message ?? '')?.[1];
  try {
    return dump ? JSON.parse(dump) : undefined;
  } catch {
    return undefined;
  }
}
