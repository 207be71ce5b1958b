// Loaded (node --import) into the conformance suite's own process by conformance.test.ts:
// - its scenario servers listen on a port of every interface; here they listen on 127.0.0.1 only
//   (the URLs it gives the client name localhost, which reaches them). It reads the port right
//   after listen(), so the address must be bound at once: Node looks a host up first, even an
//   address, and that lookup answers at once here;
// - on Node 20 its bundle cannot load: it imports `globSync` from node:fs (Node 22), for its
//   `tier-check` command only. fs-glob-sync.mjs gives it that name (see there).
import dns from 'node:dns';
import fs from 'node:fs';
import { register } from 'node:module';
import net from 'node:net';

const loopback = '127.0.0.1';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenOnLoopback(...args) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') args.splice(1, 0, loopback);
  return listen.apply(this, args);
};

const lookup = dns.lookup;
dns.lookup = function lookupLoopbackAtOnce(hostname, ...rest) {
  const [callback] = rest;
  if (hostname === loopback && rest.length === 1 && typeof callback === 'function') {
    callback(null, loopback, 4);
    return {};
  }
  return lookup.call(this, hostname, ...rest);
};

if (!('globSync' in fs)) register('./fs-glob-sync.mjs', import.meta.url);
