// `@claw/a2a/server`: claw as an A2A agent. A subpath of its own, so that a program that only
// delegates never loads the SDK's server side.
export { agentCardJson, bearerSchemeName, clawAgentCard, type ClawAgentCardOptions } from './agent-card.js';
export {
  ClawAgentExecutor,
  type InboundOutcome,
  type InboundRun,
  type InboundRunner,
  type InboundTask,
} from './executor.js';
export {
  a2aProtocolVersion,
  createA2aJsonRpcServer,
  tooManyTasksErrorCode,
  type A2aJsonRpcServer,
  type A2aJsonRpcServerOptions,
} from './inbound.js';
export {
  attachInboundSlot,
  claimInboundSlot,
  defaultMaxInboundTasks,
  InboundTaskLimit,
  type InboundTaskSlot,
} from './task-limit.js';
export {
  defaultMaxFinishedTaskBytes,
  defaultMaxFinishedTasks,
  defaultTaskRetentionMs,
  InboundTaskStore,
  type InboundTaskClock,
  type InboundTaskStoreOptions,
} from './task-store.js';
export { messageText, partText, textPart } from './parts.js';
