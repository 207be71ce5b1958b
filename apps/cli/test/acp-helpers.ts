import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import {
  client,
  ndJsonStream,
  type ClientConnection,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type ReadTextFileRequest,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
  type Stream,
  type WriteTextFileRequest,
} from '@agentclientprotocol/sdk';
import { clawMain } from './helpers.js';

/** What the test's editor answers a permission request with. */
export type PermissionAnswer = 'allow_once' | 'allow_always' | 'reject_once' | 'cancelled';

/** How the test's editor fills in forms (`elicitation/create`). */
export interface EditorForms {
  /** The editor's answer; `signal` aborts when claw cancels the request. */
  answer: (request: CreateElicitationRequest, signal: AbortSignal) => Promise<CreateElicitationResponse>;
  /** Offer `elicitation.form` at `initialize` (default true): false answers without offering. */
  offered?: boolean;
}

export interface EditorOptions {
  env: Record<string, string>;
  /** The answers to permission requests, in order (then `reject_once`). */
  permissions?: PermissionAnswer[];
  /** Offer `fs/read_text_file` and `fs/write_text_file` from these buffers (path → text). */
  buffers?: Map<string, string>;
  /** Answer `elicitation/create` (MCP servers' requests for input). */
  forms?: EditorForms;
}

/**
 * An editor for tests: the ACP SDK's client side on an ACP stream. It records every update and
 * request it gets.
 */
export class EditorClient {
  readonly connection: ClientConnection;
  readonly updates: Array<{ sessionId: string; update: SessionUpdate }> = [];
  readonly permissionRequests: RequestPermissionRequest[] = [];
  readonly elicitations: CreateElicitationRequest[] = [];
  readonly reads: ReadTextFileRequest[] = [];
  readonly writes: WriteTextFileRequest[] = [];
  private readonly answers: PermissionAnswer[];

  constructor(protected readonly options: Omit<EditorOptions, 'env'>, stream: Stream) {
    this.answers = [...(options.permissions ?? [])];
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
    const forms = options.forms;
    if (forms !== undefined) {
      app = app.onRequest('elicitation/create', ({ params, signal }) => {
        this.elicitations.push(params);
        return forms.answer(params, signal);
      });
    }
    this.connection = app.connect(stream);
  }

  get agent(): ClientConnection['agent'] {
    return this.connection.agent;
  }

  /**
   * `initialize`, offering the editor's file system when the editor has buffers, and forms when
   * it fills them in (unless told not to offer them).
   */
  initialize() {
    const fs = this.options.buffers === undefined ? undefined : { readTextFile: true, writeTextFile: true };
    const forms = this.options.forms !== undefined && this.options.forms.offered !== false;
    return this.agent.request('initialize', {
      protocolVersion: 1,
      clientCapabilities: { ...(fs === undefined ? {} : { fs }), ...(forms ? { elicitation: { form: {} } } : {}) },
      clientInfo: { name: 'claw-test-editor', version: '1.0.0' },
    });
  }

  /** The updates of one session, by kind. */
  of<K extends SessionUpdate['sessionUpdate']>(sessionId: string, kind: K): Array<Extract<SessionUpdate, { sessionUpdate: K }>> {
    return this.updates
      .filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === kind)
      .map((entry) => entry.update as Extract<SessionUpdate, { sessionUpdate: K }>);
  }
}

/**
 * An editor for tests connected to the built `claw acp` run as a child process (ACP-6).
 */
export class TestEditor extends EditorClient {
  readonly child: ChildProcess;
  stderr = '';
  readonly exited: Promise<number | string>;

  constructor(options: EditorOptions) {
    const child = spawn(process.execPath, [clawMain, 'acp'], {
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    if (child.stdin === null || child.stdout === null) throw new Error('no pipes');
    super(options, ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    ));
    this.child = child;
    this.child.stderr?.setEncoding('utf8').on('data', (text: string) => void (this.stderr += text));
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    });
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
