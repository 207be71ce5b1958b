export { MemorySession, type MemorySessionOptions } from './memory-session.js';
