import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/*
 * A real browser for the page's tests (R3-9): Debian's chromium, driven by playwright-core, headless,
 * with an empty profile and nothing that phones home. `.ci/run` installs chromium when it is
 * missing; where it cannot be installed the browser tests are skipped with a message saying so.
 */

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
];

export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM)
    ? undefined
    : `chromium not found at ${CHROMIUM}: the page's browser tests are skipped (apt-get install -y chromium, as .ci/run does, or set CHROMIUM_PATH)`;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless chromium with a fresh, empty user-data dir (removed on close). */
export async function launchChromium(colorScheme: 'light' | 'dark' = 'light'): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'page-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1200, height: 900 },
    colorScheme,
    timeout: 30_000,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
