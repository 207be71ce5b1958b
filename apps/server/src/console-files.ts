import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { isInside } from '@claw/sandbox';
import { baseHeaders, sendError } from './http-replies.js';

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

// The console talks only to its own origin; nothing inline, no frames (clickjacking).
const consolePolicy =
  "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * Serves one file of the web console's build (GET/HEAD): `/` is `index.html`, any other path a
 * file inside `root` — after decoding and after symlinks, never outside it. No build: a 404
 * that says how to make one.
 */
export async function serveConsoleFile(
  root: string | undefined,
  urlPath: string,
  method: string,
  response: ServerResponse,
): Promise<void> {
  if (root === undefined) {
    return sendError(
      response,
      404,
      'console_not_built',
      'the web console is not built: build it (npm run build in the web app), then restart the ' +
      'server; the channel protocol is at /ws',
    );
  }
  let relative: string;
  try {
    relative = decodeURIComponent(urlPath === '/' ? '/index.html' : urlPath);
  } catch {
    return sendError(response, 400, 'bad_path', 'the path is not valid percent-encoding');
  }
  const file = await insideRoot(root, relative);
  if (file === undefined) return sendError(response, 404, 'not_found', `no file ${urlPath}`);
  const type = contentTypes[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
  const info = await stat(file);
  response.writeHead(200, {
    ...baseHeaders,
    'Content-Type': type,
    'Content-Length': info.size,
    'Content-Security-Policy': consolePolicy,
    'X-Frame-Options': 'DENY',
    // Built assets have content hashes in their names; index.html must always be fresh.
    'Cache-Control': file.endsWith('index.html') ? 'no-cache' : 'public, max-age=31536000, immutable',
  });
  if (method === 'HEAD') {
    response.end();
    return;
  }
  createReadStream(file).on('error', () => response.destroy()).pipe(response);
}

/** The real path of a regular file inside `root`, or undefined. */
async function insideRoot(root: string, relative: string): Promise<string | undefined> {
  if (relative.includes('\0')) return undefined;
  const realRoot = await realpath(root).catch(() => undefined);
  if (realRoot === undefined) return undefined;
  const candidate = path.resolve(realRoot, `.${path.posix.normalize(relative)}`);
  const real = await realpath(candidate).catch(() => undefined);
  if (real === undefined) return undefined;
  if (real === realRoot || !isInside(realRoot, real)) return undefined;
  const info = await stat(real).catch(() => undefined);
  return info?.isFile() === true ? real : undefined;
}
