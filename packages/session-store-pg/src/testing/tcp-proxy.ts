// A TCP proxy in front of a test cluster that can stop forwarding (LIFE-2, LIFE-3): a database
// that stops answering without refusing anything, as when a network drops packets. The sockets
// stay open and nothing is answered, so only a client's own timeouts can end its waits.
import net from 'node:net';

/** A running proxy on 127.0.0.1 (port 0: a free one). Call `close()` when done. */
export class TcpProxy {
  /** Every socket open, both sides. */
  private readonly sockets = new Set<net.Socket>();
  private readonly clients = new Set<net.Socket>();
  private holed = false;

  private constructor(
    private readonly server: net.Server,
    private readonly target: { host: string; port: number },
    readonly port: number,
  ) {}

  /** Starts a proxy that forwards to `target` (default host 127.0.0.1). */
  static async start(target: { host?: string; port: number }): Promise<TcpProxy> {
    const to = { host: target.host ?? '127.0.0.1', port: target.port };
    const made: { proxy?: TcpProxy } = {};
    // Half-open allowed: a client's FIN is not answered with one while the proxy is a black hole.
    const server = net.createServer(
      { allowHalfOpen: true },
      (client) => made.proxy?.accept(client),
    );
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        if (address === null || typeof address === 'string') reject(new Error('no port'));
        else resolve(address.port);
      });
    });
    made.proxy = new TcpProxy(server, to, port);
    return made.proxy;
  }

  /** `url` (a connection string) with its host and port those of this proxy. */
  url(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  /**
   * Connections the clients hold open: until a client ends or drops one. (Which of the two, a
   * black hole cannot tell: it answers neither.)
   */
  get connections(): number {
    return this.clients.size;
  }

  /**
   * Stops forwarding, both ways, on every connection and on those made later: bytes are read and
   * dropped, an end is not passed on, nothing is closed (a database that stopped answering).
   */
  blackHole(): void {
    this.holed = true;
  }

  /** Closes every connection at once (a dropped connection), black hole or not. */
  dropAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  /** Drops every connection and stops listening. */
  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.track(client);
    this.clients.add(client);
    client.on('end', () => this.clients.delete(client));
    client.on('close', () => this.clients.delete(client));
    // Accepted in a black hole: held open, never connected on.
    if (this.holed) {
      client.resume();
      return;
    }
    const server = net.connect({ ...this.target, allowHalfOpen: true });
    this.track(server);
    client.on('close', () => {
      if (!this.holed) server.destroy();
    });
    server.on('close', () => {
      if (!this.holed) client.destroy();
    });
    client.on('data', (chunk: Buffer) => {
      if (!this.holed) server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      if (!this.holed) client.write(chunk);
    });
    client.on('end', () => {
      if (!this.holed) server.end();
    });
    server.on('end', () => {
      if (!this.holed) client.end();
    });
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }
}
