export {
  authKey,
  McpAuthStore,
  mcpAuthFile,
  mcpAuthFileName,
  type McpAuthEntry,
} from './auth-store.js';
export {
  defaultCallTimeoutMs,
  defaultStartupTimeoutMs,
  loadMcpConfig,
  mcpConfigFile,
  parseMcpConfig,
  type LoadMcpConfigOptions,
  type McpConfig,
  type McpHttpServerConfig,
  type McpOAuthConfig,
  type McpServerConfig,
  type McpStdioServerConfig,
} from './config.js';
export {
  McpConnection,
  defaultReconnectPolicy,
  type McpCallContext,
  type McpConnectionOptions,
  type McpServerState,
  type McpWarning,
  type ReconnectPolicy,
} from './connection.js';
export { base64Bytes, capOutput, formatContent, formatResourceContents } from './content.js';
export {
  defaultElicitationTimeoutMs,
  validateElicitationContent,
  type McpElicitationAnswer,
  type McpElicitationContent,
  type McpElicitationHandler,
  type McpElicitationRequest,
  type McpElicitationSchema,
} from './elicitation.js';
export {
  loginCommand,
  McpAuthError,
  McpAuthStoreError,
  McpConfigError,
  McpLoginError,
  McpNeedsLoginError,
  McpRequestError,
  McpServerError,
  McpStartError,
  McpTimeoutError,
  McpUnavailableError,
} from './errors.js';
export {
  McpServers,
  openMcpServers,
  type McpServerStatus,
  type McpServersOptions,
  type OpenMcpServersOptions,
} from './manager.js';
export {
  loginMcpServer,
  logoutMcpServer,
  type McpLoginOptions,
  type McpLoginResult,
  type McpLogoutOptions,
  type McpLogoutResult,
} from './login.js';
export { assignToolNames, maxToolNameLength, sanitizeNamePart, type RemoteToolName } from './names.js';
export {
  ClawOAuthProvider,
  defaultAuthorizationTimeoutMs,
  type ClawOAuthProviderOptions,
  type McpOAuthOptions,
  type PendingAuthorization,
} from './oauth-provider.js';
export { maxListPages } from './pages.js';
export { workspaceRoot, type McpRoot } from './roots.js';
export { defaultSetTimer, type SetTimer } from './timers.js';
export { promptToolName, resourceToolNames } from './tools.js';
