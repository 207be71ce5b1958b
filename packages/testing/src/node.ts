// Node-only fakes (HTTP servers); kept off the main entry so a browser bundle never pulls them in.
export {
  FakeOpenAIServer,
  type FakeFault,
  type FakeOpenAIServerOptions,
  type FakeToolCall,
  type FakeTurn,
  type FakeTurnSource,
  type RecordedRequest,
} from './fake-openai-server.js';
export { writeHostileSettings, type HostileSettingsOptions } from './hostile-workspace.js';
export {
  watchUnhandledRejections,
  type UnhandledRejectionWatch,
} from './unhandled-rejections.js';
