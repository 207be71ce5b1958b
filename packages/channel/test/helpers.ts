import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plainCommandSpawner } from '@claw/sandbox';
import { MemorySessionManager } from '@claw/session-store';
import { ScriptedProvider, type ScriptedStep } from '@claw/testing';
import { RuntimeFactory, defaultSettings, type RuntimeFactoryOptions, type Settings } from '@claw/runtime';
import {
  ChannelConnection,
  serverEventSchema,
  type ChannelConnectionOptions,
  type CloseReason,
  type ServerEvent,
} from '../src/index.js';

const cleanups: Array<() => Promise<void>> = [];

export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
}

export async function workspace(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'claw-channel-'));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

export const settings = (overrides: Partial<Settings> = {}): Settings => ({
  ...defaultSettings,
  apiKey: undefined,
  baseUrl: undefined,
  approval: 'ask',
  ...overrides,
});

/** A real factory on a scripted model, sessions in memory, plain bash. */
export function factoryWith(steps: ScriptedStep[], options: Partial<RuntimeFactoryOptions> = {}): RuntimeFactory {
  const store = new MemorySessionManager();
  const factory = new RuntimeFactory({
    settings: settings(),
    provider: new ScriptedProvider(steps),
    spawner: plainCommandSpawner(),
    sessions: { open: (id, open) => store.open(id, open), list: () => store.list() },
    ...options,
  });
  cleanups.push(() => factory.close());
  return factory;
}

/** A client: what its connection wrote (each line checked against the protocol schema). */
export class TestClient {
  readonly events: ServerEvent[] = [];
  closedWith: CloseReason | undefined;
  readonly connection: ChannelConnection;
  private readonly listeners = new Set<() => void>();
  /** While set, writes wait for it (a client that stopped reading). */
  stall: Promise<void> | undefined;
  /** While set, each write first waits for what it returns (a client that reads slowly). */
  slowly: (() => Promise<void>) | undefined;

  constructor(options: Omit<ChannelConnectionOptions, 'writer' | 'name'> & { name?: string }) {
    this.connection = new ChannelConnection({
      name: 'client',
      ...options,
      writer: {
        write: async (json) => {
          if (this.stall !== undefined) await this.stall;
          if (this.slowly !== undefined) await this.slowly();
          this.events.push(serverEventSchema.parse(JSON.parse(json)));
          this.notify();
        },
        close: (reason) => {
          this.closedWith = reason;
          this.notify();
        },
      },
    });
    cleanups.push(() => this.connection.close());
  }

  send(message: unknown): Promise<void> {
    return this.connection.handleLine(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** Waits until an event matches (searching from `from`); fails after 5 s showing what came. */
  async next<T extends ServerEvent['type']>(
    type: T,
    match: (event: Extract<ServerEvent, { type: T }>) => boolean = () => true,
    from = 0,
  ): Promise<Extract<ServerEvent, { type: T }>> {
    const find = () =>
      this.events.slice(from).find(
        (event): event is Extract<ServerEvent, { type: T }> =>
          event.type === type && match(event as Extract<ServerEvent, { type: T }>),
      );
    const found = find();
    if (found !== undefined) return found;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`no ${type} event within 5 s; got: ${this.events.map((event) => event.type).join(', ')}`));
      }, 5000);
      const listener = (): void => {
        const hit = find();
        if (hit === undefined) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(hit);
      };
      this.listeners.add(listener);
    });
  }

  of<T extends ServerEvent['type']>(type: T): Array<Extract<ServerEvent, { type: T }>> {
    return this.events.filter((event): event is Extract<ServerEvent, { type: T }> => event.type === type);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

export const writeCall = (id: string) => ({
  toolCalls: [{ id, name: 'write_file', arguments: { path: `${id}.txt`, content: id } }],
});
