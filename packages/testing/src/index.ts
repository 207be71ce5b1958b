export {
  ScriptedProvider,
  type ScriptedCall,
  type ScriptedProviderOptions,
  type ScriptedReply,
  type ScriptedStep,
} from './scripted-provider.js';
export { splitIntoPieces } from './chunking.js';
export { AllowAllGate, DenyAllGate } from './gates.js';
export {
  RecordingReporter,
  type RecordingReporterOptions,
  type ReporterEvent,
  type ReporterEventType,
} from './recording-reporter.js';
export {
  MemoryTextFiles,
  type MemoryTextFilesOptions,
  type TextFileCall,
} from './memory-text-files.js';
export { ManualClock } from './manual-clock.js';
