export { OpenAIProvider, type OpenAIProviderOptions } from './openai-provider.js';
export {
  ContextLengthExceededError,
  HttpError,
  ModelServerError,
  NetworkError,
  findHttpError,
  isContextLengthExceeded,
  parseRetryAfter,
  translateError,
  type ServerErrorSource,
} from './errors.js';
export { StreamAssembler } from './stream-assembler.js';
export { toChatMessages, toChatTools } from './convert.js';
export { classifyError, type ClassifyErrorOptions, type ErrorClassification } from './classify.js';
export { ModelTimeoutError, PartialResponseError, type ModelTimeoutKind } from './retry-errors.js';
export {
  RetryingProvider,
  retryingProviderDefaults,
  type RetryInfo,
  type RetryingProviderOptions,
} from './retrying-provider.js';
export type { SetTimer } from './attempt-scope.js';
