export {
  ApprovalError,
  ApprovalNotPendingError,
  AuditLogError,
  GrantStoreError,
  type ApprovalErrorCode,
} from './errors.js';
export type { Policy, PolicyVerdict } from './policy.js';
export { DefaultPolicy, type DefaultPolicyOptions } from './default-policy.js';
export { reasonShowsChars } from './describe-call.js';
export { argumentDigest, canonicalJson } from './digest.js';
export {
  grantKey,
  isGrantExpired,
  type Grant,
  type GrantKeyParts,
  type GrantStore,
} from './grant.js';
export { MemoryGrantStore } from './memory-grant-store.js';
export { FileGrantStore, type FileGrantStoreOptions } from './file-grant-store.js';
export { grantFileVersion, readGrant } from './grant-file.js';
export {
  MemoryAuditLog,
  type AuditDecision,
  type AuditEntry,
  type AuditLog,
} from './audit.js';
export { FileAuditLog, type FileAuditLogOptions } from './file-audit-log.js';
export {
  nodeFileSystem,
  type ApprovalFileHandle,
  type ApprovalFileSystem,
} from './file-system.js';
export {
  answerParts,
  isApprovalDecision,
  staticHandler,
  type ApprovalAnswer,
  type ApprovalHandler,
  type ApprovalPrompt,
  type ElicitationPrompt,
} from './handler.js';
export { PendingApprovals, type PendingApprovalsOptions } from './pending-approvals.js';
export { UnattendedApprovals, type UnattendedApprovalsOptions } from './unattended.js';
export {
  Gate,
  approvalModes,
  type ApprovalMode,
  type GateOptions,
} from './gate.js';
