/** `router-cli/kit`: the features as a library: models, conversations, attachments, schemas, tools and MCP servers (no terminal IO, no exit codes). */
export { ToolSourceError, functionTool, type Tool, type ToolResult, type ToolImage, type ToolCallInfo } from './tool.js';
export { commandTool, runCommand, MAX_RESULT_BYTES, type CommandRun } from './command-tool.js';
export { toolEnv } from './tool-env.js';
export * from './spend/index.js';
export { chatWithTools, type ChatToolsOptions, type ChatToolsResult } from './chat-tools.js';
export { connectMcp, type McpServer, type McpOptions } from './mcp.js';
export { ToolSet, type ToolDeclaration, type ToolSetOptions } from './toolset.js';
export { runToolCall, ResultBudget, DEFAULT_RESULTS_BYTES, type ToolCallRequest, type CallOutcome, type CallOptions } from './tool-calls.js';
export { splitCommandLine } from './command-line.js';
export { KitError, AttachmentError, SchemaError, SchemaMismatchError, ConversationError, ToolCallsError } from './errors.js';
export { FileLockTimeout } from '../internal/lock-timeout.js';
export { readAttachment, attachmentFromBytes, attachmentFromUrl, chatParts, responsesParts, attachmentReference, MAX_ATTACHMENT_BYTES, type Attachment, type AttachmentKind, type BytesOptions } from './attachments.js';
export { answerSchema, checkAnswer, chatResponseFormat, responsesTextFormat, type AnswerSchema } from './schema.js';
export { conciseSchema } from './schema-dsl.js';
export { ConversationStore, type ConversationRecord, type ConversationSummary, type StoreOptions } from './conversation-store.js';
export { ChatModel, chatModel, Conversation, type ConversationOptions } from './conversation.js';
export { runPrompt, type PromptOptions, type PromptResponse } from './prompt.js';
