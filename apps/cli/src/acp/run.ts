import { Readable, Writable } from 'node:stream';
import { agent, methods, ndJsonStream, type AgentApp } from '@agentclientprotocol/sdk';
import type { SettingOverrides } from '@claw/runtime';
import type { CliIo } from '../cli.js';
import { exitStatus } from '../exit-status.js';
import { version } from '../version.js';
import { ClawAcpAgent } from './agent.js';

/**
 * `claw acp` (ACP-1): serves one editor over stdin/stdout (newline-delimited JSON-RPC, ACP
 * protocol version 1) until the editor closes stdin, then cancels what runs, stores every
 * session and returns 0. stdout carries protocol messages only; notes go to stderr. Malformed
 * messages and unknown methods are answered with JSON-RPC errors by the SDK, and the process
 * goes on serving (ACP-5).
 */
export async function runAcp(overrides: SettingOverrides, io: CliIo): Promise<number> {
  const note = (text: string): void => {
    io.stderr.write(`${text}\n`);
  };
  const claw = new ClawAcpAgent({ env: io.env, overrides, version, note });
  const app = acpAgentApp(claw);
  const stream = ndJsonStream(
    Writable.toWeb(io.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(io.stdin) as ReadableStream<Uint8Array>,
  );
  const connection = app.connect(stream);
  // An interrupt (Ctrl-C in a terminal running it by hand) ends it like the editor closing it.
  const release = io.interrupts.handle(() => connection.close());
  try {
    await connection.closed.catch(() => undefined);
  } finally {
    release();
    await claw.close();
  }
  return exitStatus.completed;
}

/** The ACP methods claw serves, each handed to `claw` (tests connect it to in-memory streams). */
export function acpAgentApp(claw: ClawAcpAgent): AgentApp {
  return agent({ name: 'claw' })
    .onConnect((connection) => claw.connected(connection.client))
    .onRequest(methods.agent.initialize, ({ params }) => claw.initialize(params))
    .onRequest(methods.agent.session.new, ({ params }) => claw.newSession(params))
    .onRequest(methods.agent.session.load, ({ params }) => claw.loadSession(params))
    .onRequest(methods.agent.session.prompt, ({ params, signal }) => claw.prompt(params, signal))
    .onNotification(methods.agent.session.cancel, ({ params }) => claw.cancel(params.sessionId));
}
