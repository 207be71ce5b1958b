export {
  a2aConfigFile,
  loadA2aConfig,
  parseA2aConfig,
  type A2aConfig,
  type A2aPeer,
  type A2aPeerProtocol,
  type LoadA2aConfigOptions,
} from './config.js';
export { A2aConfigError, A2aRemoteError } from './errors.js';
export { createDelegateTool, delegateToolName, type DelegateToolOptions } from './delegate-tool.js';
export {
  agentCardUrl,
  delegateTask,
  formatReport,
  type DelegateOptions,
  type DelegationReport,
  type DelegationState,
} from './outbound.js';
export {
  sendEnvelopeMessage,
  type Envelope,
  type EnvelopeTaskResult,
  type SendEnvelopeOptions,
} from './envelope.js';
