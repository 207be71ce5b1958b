export {
  ScriptedProvider,
  type ScriptedCall,
  type ScriptedProviderOptions,
  type ScriptedReply,
  type ScriptedStep,
} from './scripted-provider.js';
export { splitIntoPieces } from './chunking.js';
