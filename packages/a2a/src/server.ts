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
export { a2aProtocolVersion, createA2aJsonRpcServer, type A2aJsonRpcServer } from './inbound.js';
export { messageText, partText, textPart } from './parts.js';
