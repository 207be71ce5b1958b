import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium: the console's end-to-end tests drive it with playwright-core (WEB-6). */
export const chromiumPath = process.env.CLAW_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Whether the browser tests can run here. CI installs Chromium and sets CLAW_REQUIRE_BROWSER, so
 * a missing browser fails there instead of skipping.
 */
export function browserAvailable(): boolean {
  if (existsSync(chromiumPath)) return true;
  if (process.env.CLAW_REQUIRE_BROWSER === '1') {
    throw new Error(
      `Chromium is required for the console tests but ${chromiumPath} does not exist: install ` +
      'it (apt-get install -y chromium) or set CLAW_CHROMIUM to its path',
    );
  }
  return false;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** Where screenshots of the main states go: test artifacts, not committed (see .gitignore). */
export async function screenshotPath(name: string): Promise<string> {
  const folder = fileURLToPath(new URL('../../../test-artifacts/console/', import.meta.url));
  await mkdir(folder, { recursive: true });
  return path.join(folder, `${name}.png`);
}
