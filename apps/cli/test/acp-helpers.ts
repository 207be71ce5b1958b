import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import {
  client,
  ndJsonStream,
  type ClientConnection,
  type ReadTextFileRequest,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
  type WriteTextFileRequest,
} from '@agentclientprotocol/sdk';
import { clawMain } from './helpers.js';

/** What the test's editor answers a permission request with. */
export type PermissionAnswer = 'allow_once' | 'allow_always' | 'reject_once' | 'cancelled';

export interface EditorOptions {
  env: Record<string, string>;
  /** The answers to permission requests, in order (then `reject_once`). */
  permissions?: PermissionAnswer[];
  /** Offer `fs/read_text_file` and `fs/write_text_file` from these buffers (path → text). */
  buffers?: Map<string, string>;
}

/**
 * An editor for tests: the ACP SDK's client side, connected to the built `claw acp` run as a
 * child process (ACP-6). It records every update and request it gets.
 */
export class TestEditor {
  readonly child: ChildProcess;
  readonly connection: ClientConnection;
  readonly updates: Array<{ sessionId: string; update: SessionUpdate }> = [];
  readonly permissionRequests: RequestPermissionRequest[] = [];
  readonly reads: ReadTextFileRequest[] = [];
  readonly writes: WriteTextFileRequest[] = [];
  stderr = '';
  readonly exited: Promise<number | string>;
  private readonly answers: PermissionAnswer[];

  constructor(private readonly options: EditorOptions) {
    this.answers = [...(options.permissions ?? [])];
    this.child = spawn(process.execPath, [clawMain, 'acp'], {
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stderr?.setEncoding('utf8').on('data', (text: string) => void (this.stderr += text));
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    });
    let app = client({ name: 'claw-test-editor' })
      .onNotification('session/update', ({ params }) => {
        this.updates.push({ sessionId: params.sessionId, update: params.update });
      })
      .onRequest('session/request_permission', async ({ params, signal }): Promise<RequestPermissionResponse> => {
        this.permissionRequests.push(params);
        const answer = this.answers.shift() ?? 'reject_once';
        if (answer === 'cancelled') {
          // An editor that waits for its user: the request is withdrawn by a cancel.
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          return { outcome: { outcome: 'cancelled' } };
        }
        return { outcome: { outcome: 'selected', optionId: answer } };
      });
    const buffers = options.buffers;
    if (buffers !== undefined) {
      app = app
        .onRequest('fs/read_text_file', ({ params }) => {
          this.reads.push(params);
          const text = buffers.get(params.path);
          if (text === undefined) throw new Error(`file not found: ${params.path}`);
          return { content: text };
        })
        .onRequest('fs/write_text_file', ({ params }) => {
          this.writes.push(params);
          buffers.set(params.path, params.content);
          return {};
        });
    }
    if (this.child.stdin === null || this.child.stdout === null) throw new Error('no pipes');
    this.connection = app.connect(ndJsonStream(
      Writable.toWeb(this.child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(this.child.stdout) as ReadableStream<Uint8Array>,
    ));
  }

  get agent(): ClientConnection['agent'] {
    return this.connection.agent;
  }

  /** `initialize`, offering the editor's file system when the editor has buffers. */
  initialize() {
    const fs = this.options.buffers === undefined ? undefined : { readTextFile: true, writeTextFile: true };
    return this.agent.request('initialize', {
      protocolVersion: 1,
      clientCapabilities: fs === undefined ? {} : { fs },
      clientInfo: { name: 'claw-test-editor', version: '1.0.0' },
    });
  }

  /** The updates of one session, by kind. */
  of<K extends SessionUpdate['sessionUpdate']>(sessionId: string, kind: K): Array<Extract<SessionUpdate, { sessionUpdate: K }>> {
    return this.updates
      .filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === kind)
      .map((entry) => entry.update as Extract<SessionUpdate, { sessionUpdate: K }>);
  }

  /** Closes stdin (the editor goes away) and waits for claw to exit. */
  async close(): Promise<number | string> {
    this.child.stdin?.end();
    return this.exited;
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}
