export { describeSessionLog, type SessionLogBackend } from './conformance.js';
