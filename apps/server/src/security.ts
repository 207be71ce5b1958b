import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

// The checks that keep a local agent server from being driven by a web page or another machine
// (SEC-1, SEC-3, SEC-4): which addresses it may listen on, which Host and Origin headers it
// accepts, and where a token may never be.

/** True for a loopback name or address: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopback(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  if (isIP(name) === 6) return name === '::1' || name === '0:0:0:0:0:0:0:1';
  return false;
}

/** How a host goes into a URL or a Host header (`[::1]` for IPv6). */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

export interface OriginPolicyOptions {
  /** The HTTP port the server listens on. */
  port: number;
  /** The address it listens on (`--host`). */
  host: string;
  /** More origins allowed to open WebSockets (`--allow-origin`). */
  allowOrigins: readonly string[];
}

/**
 * Which `Host` and `Origin` headers the HTTP port accepts. `Host` must name a loopback address or
 * `localhost` with the server's port, or the address it listens on, or the host of an allowed
 * origin: anything else is a DNS-rebinding attempt (a page of attacker.example whose name now
 * resolves to 127.0.0.1). `Origin`, when sent, must be the console's own origin or an allowed one
 * — never `null`, never another local port.
 */
export class OriginPolicy {
  private readonly hosts: Set<string>;
  private readonly origins: Set<string>;

  constructor(options: OriginPolicyOptions) {
    const { port } = options;
    const own = ['127.0.0.1', 'localhost', '[::1]', ...listeningNames(options.host)];
    this.hosts = new Set(own.map((host) => `${host.toLowerCase()}:${port}`));
    this.origins = new Set(own.map((host) => `http://${host.toLowerCase()}:${port}`));
    for (const origin of options.allowOrigins) {
      const url = new URL(origin);
      this.origins.add(url.origin);
      this.hosts.add(url.host.toLowerCase());
      // An allowed origin without a port is served on this port behind no proxy, or on the
      // default port by a proxy: both Host forms are the operator's own.
      if (url.port === '') this.hosts.add(`${url.hostname.toLowerCase()}:${port}`);
    }
  }

  /** Why the Host header is refused, or undefined when it is fine. */
  hostProblem(host: string | undefined): string | undefined {
    if (host === undefined || host === '') return 'the request has no Host header';
    if (this.hosts.has(host.toLowerCase())) return undefined;
    return `the Host header "${host}" is not this server (DNS rebinding is refused)`;
  }

  /** Why the Origin header is refused, or undefined when it is fine (or absent: not a browser). */
  originProblem(origin: string | undefined): string | undefined {
    if (origin === undefined) return undefined;
    if (this.origins.has(origin.toLowerCase())) return undefined;
    return (
      `the Origin "${origin}" may not open a WebSocket here; allowed: ` +
      `${[...this.origins].join(', ')} (add one with --allow-origin)`
    );
  }
}

/**
 * The names a client may use for the address the server listens on: that address, or for a
 * wildcard (`0.0.0.0`, `::`, with --allow-remote) every address of this machine's interfaces.
 */
function listeningNames(host: string): string[] {
  if (host !== '0.0.0.0' && host !== '::') return [urlHost(host)];
  return Object.values(networkInterfaces()).flatMap((addresses) =>
    (addresses ?? []).map((address) => urlHost(address.address)),
  );
}

/** True when a URL's query names a token: never accepted there (SEC-2). */
export function tokenInQuery(url: URL): boolean {
  for (const name of url.searchParams.keys()) {
    if (/token|auth|key|secret|password/i.test(name)) return true;
  }
  return false;
}
