/**
 * Headless Chromium for the UI's browser tests and benchmarks: Debian's `chromium` package
 * driven by puppeteer-core (a driver only: nothing is downloaded at install time). The browser
 * runs without its sandbox because the tests run as root, and accepts the server's generated
 * self-signed certificate.
 */
import { existsSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';

const CANDIDATES = [process.env.PLUGFLOW_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(Boolean) as string[];

export function chromiumPath(): string {
  const found = CANDIDATES.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      `no Chromium at ${CANDIDATES.join(', ')}: the UI's browser tests need Debian's chromium package (apt-get install chromium; .ci/run installs it), or PLUGFLOW_CHROMIUM=<path>`,
    );
  }
  return found;
}

export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    acceptInsecureCerts: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--window-size=1280,800'],
    defaultViewport: { width: 1280, height: 800 },
  });
}
