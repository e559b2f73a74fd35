/** `router-cli/kit`: the tool loop and its pieces, the MCP client, and the spend guard, budgets and ledger, for programs (no terminal IO, no exit codes). */
export { ToolSourceError, functionTool, type Tool, type ToolResult, type ToolImage, type ToolCallInfo } from './tool.js';
export { commandTool, runCommand, MAX_RESULT_BYTES } from './command-tool.js';
export { toolEnv } from './tool-env.js';
export { connectMcp, type McpServer, type McpOptions } from './mcp.js';
export { ToolSet, type ToolDeclaration, type ToolSetOptions } from './toolset.js';
export { runToolCall, ResultBudget, DEFAULT_RESULTS_BYTES, type ToolCallRequest, type CallOutcome, type CallOptions } from './tool-calls.js';
export { splitCommandLine } from './command-line.js';
export { chatWithTools, ToolRoundsExceeded, type ChatToolsOptions, type ChatToolsResult } from './chat-tools.js';
export { SpendGuard, type SpendGuardOptions, type SpendCall, type SpendEvents, type Checked, type Cap } from './spend/spend-guard.js';
export { SpendError, BudgetReached, CostCapExceeded, CostUnbounded, BudgetUnkept, BudgetBusy, InvalidAmount, type SpendErrorCode, type Budget, type BudgetName } from './spend/errors.js';
export { budgetsFor, budgetLimits, spentBy, usdAmount, type BudgetSettings, type Spent } from './spend/budget.js';
export { BudgetHold, withBudgetLock, heldByOthers, type Held } from './spend/budget-hold.js';
export { appendUsage, ledgerPath, usageFields, type UsageRecord } from './spend/ledger.js';
export { eachLedgerRecord } from './spend/ledger-read.js';
export { reconcile, type ReconcileReport } from './spend/reconcile.js';
export { readPricing, worstBound, usd, usdBound, type Pricing, type CallSize } from './spend/cost-bound.js';
export { pricesFrom, serviceListPrices } from './spend/prices.js';
