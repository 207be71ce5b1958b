export {
  approvalRequestSchema,
  clientMessageSchema,
  connectionEventSchema,
  defaultMaxMessageBytes,
  instructionFileSchema,
  isSessionEndCode,
  parseClientMessage,
  protocolVersion,
  serverEventSchema,
  sessionEndCodes,
  sessionEventSchema,
  toWireMessage,
  wireMessageSchema,
  type ClientMessage,
  type ClientMessageOf,
  type ClientMessageType,
  type ConnectionEvent,
  type InstructionFile,
  type ParseProblem,
  type ParsedClientMessage,
  type ServerEvent,
  type ServerEventOf,
  type ServerEventType,
  type SessionEndCode,
  type WireMessage,
} from './protocol.js';
export { ChannelError } from './errors.js';
export {
  OutboundQueue,
  defaultOutboundLimits,
  type ChannelWriter,
  type CloseReason,
  type OutboundLimits,
} from './outbound-queue.js';
export { ChannelSession, type ChannelRole } from './channel-session.js';
export {
  ChannelConnection,
  sameToken,
  type ChannelConnectionOptions,
  type OpenOptions,
  type OpenResult,
  type RuntimeSource,
  type UnreadableWelcomeSession,
  type WelcomeSession,
} from './connection.js';
export {
  streamTask,
  type StreamTaskOptions,
  type StreamTaskResult,
  type TaskEndEvent,
} from './stdio.js';
