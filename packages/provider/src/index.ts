export { OpenAIProvider, type OpenAIProviderOptions } from './openai-provider.js';
export {
  HttpError,
  NetworkError,
  findHttpError,
  parseRetryAfter,
  translateError,
} from './errors.js';
export { StreamAssembler } from './stream-assembler.js';
export { toChatMessages, toChatTools } from './convert.js';
