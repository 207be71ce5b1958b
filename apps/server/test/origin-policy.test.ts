import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { OriginPolicy, isLoopback, tokenInQuery } from '../src/security.js';

describe('the loopback rule (SEC-1)', () => {
  it('knows loopback names and addresses from the others', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', 'app.localhost', '::1', '[::1]']) {
      expect(isLoopback(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '192.168.1.10', '10.0.0.1', 'example.com', 'localhost.example.com', '128.0.0.1']) {
      expect(isLoopback(host), host).toBe(false);
    }
  });
});

describe('OriginPolicy (SEC-3)', () => {
  const policy = new OriginPolicy({ port: 8081, host: '127.0.0.1', allowOrigins: ['https://console.example.com'] });

  it('takes Host headers of this server only: loopback names with its port, or an allowed origin\'s host', () => {
    for (const host of ['127.0.0.1:8081', 'localhost:8081', 'LocalHost:8081', '[::1]:8081', 'console.example.com', 'console.example.com:8081']) {
      expect(policy.hostProblem(host), host).toBeUndefined();
    }
    for (const host of [undefined, '', '127.0.0.1', '127.0.0.1:8080', 'localhost:9999', 'attacker.example:8081', 'console.example.com.evil.example']) {
      expect(policy.hostProblem(host), String(host)).toBeDefined();
    }
    expect(policy.hostProblem('attacker.example:8081')).toContain('DNS rebinding');
  });

  it('takes no Origin (not a browser), its own origins, and the allowed ones; nothing else', () => {
    for (const origin of [undefined, 'http://127.0.0.1:8081', 'http://localhost:8081', 'https://console.example.com']) {
      expect(policy.originProblem(origin), String(origin)).toBeUndefined();
    }
    for (const origin of ['null', 'http://localhost:3000', 'https://127.0.0.1:8081', 'http://127.0.0.1:8081.evil.example', 'https://console.example.com:444', 'https://evil.example']) {
      expect(policy.originProblem(origin), origin).toBeDefined();
    }
    expect(policy.originProblem('https://evil.example')).toContain('--allow-origin');
  });

  it('listening on every address (--allow-remote), the machine\'s own addresses are its names', () => {
    const wide = new OriginPolicy({ port: 9000, host: '0.0.0.0', allowOrigins: [] });
    const addresses = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address));
    // Every machine has at least its loopback interface.
    const ipv4 = addresses.filter((address) => !address.includes(':'));
    expect(ipv4.length).toBeGreaterThan(0);
    for (const address of ipv4) expect(wide.hostProblem(`${address}:9000`), address).toBeUndefined();
    expect(wide.hostProblem('attacker.example:9000')).toBeDefined();
    expect(wide.originProblem('http://attacker.example:9000')).toBeDefined();
  });
});

describe('tokens in URLs (SEC-2)', () => {
  it('recognises query parameters that carry a credential', () => {
    for (const query of ['?token=x', '?access_token=x', '?auth=x', '?apiKey=x', '?secret=1', '?password=p']) {
      expect(tokenInQuery(new URL(`http://127.0.0.1/ws${query}`)), query).toBe(true);
    }
    expect(tokenInQuery(new URL('http://127.0.0.1/ws?session=a'))).toBe(false);
    expect(tokenInQuery(new URL('http://127.0.0.1/ws'))).toBe(false);
  });
});
