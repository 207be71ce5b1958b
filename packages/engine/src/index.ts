export {
  Engine,
  defaultMaxTurns,
  defaultToolConcurrency,
  describeCompaction,
  type CompactOptions,
  type EngineOptions,
} from './engine.js';
export {
  ContextExhaustedError,
  defaultCompactAtRatio,
  isContextOverflow,
} from './compaction.js';
export { contextWindowOf, knownContextWindows } from './context-window.js';
export type { RunOptions, RunResult, RunStatus } from './run-types.js';
export {
  buildSystemPrompt,
  environmentBlock,
  instructionsBlock,
  type InstructionText,
  type SessionEnvironment,
  type SystemPromptParts,
} from './system-prompt.js';
export type { SetTimer } from './timers.js';
export { ToolRegistry, joinToolSources, type ToolSource } from './registry.js';
export { ReporterError } from './safe-reporter.js';
export { WriteBehindError } from './write-behind.js';
export { canceledObservationText } from './observations.js';
export { attributes as spanAttributes, spanNames } from './telemetry.js';
export {
  defaultContextWindowTokens,
  defaultMaxWindowMessages,
  defaultReservedOutputTokens,
  estimateMessageTokens,
  selectWindow,
  type WindowOptions,
} from './working-memory.js';
export {
  bashArguments,
  builtinTools,
  defaultBashMaxTimeoutMs,
  defaultBashTimeoutMs,
  createBashTool,
  createEditFileTool,
  createReadFileTool,
  createWriteFileTool,
  editFileArguments,
  readFileArguments,
  writeFileArguments,
  type BashArguments,
  type BashToolOptions,
  type BuiltinTool,
  type BuiltinToolsOptions,
  type EditFileArguments,
  type ReadFileArguments,
  type ReadFileToolOptions,
  type WriteFileArguments,
} from './tools/index.js';
export {
  BudgetExceededError,
  type BudgetName,
  type BudgetOptions,
} from './budgets.js';
export { costOf, defaultPrices, priceOf, type PriceTable } from './pricing.js';
export {
  SubagentSession,
  spawnSubagentArguments,
  spawnSubagentToolName,
  subagentMaxTurns,
} from './subagent.js';
