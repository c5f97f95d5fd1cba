// The browser tiers' harness: Debian's headless chromium through playwright-core, one persistent
// context per test file, that reaches nothing but the server on loopback; a page opened through
// it is drawn (settled) before a test reads it, and any error it throws fails the file.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

/** Registers the file's before/after hooks; returns openPage(path, viewport?) on `base`. */
export function useChromium(base, { permissions = [] } = {}) {
  let context;
  let profileDir;
  const pageErrors = [];
  before(async () => {
    profileDir = mkdtempSync(join(tmpdir(), 'canrun-chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1280, height: 860 },
      permissions,
    });
    // The page must not reach anything but our server.
    await context.route(/^(?!http:\/\/127\.0\.0\.1:)/, (route) => route.abort());
  });
  after(async () => {
    await context?.close();
    rmSync(profileDir, { recursive: true, force: true });
    assert.deepEqual(pageErrors, [], 'the page threw no errors');
  });
  return async function openPage(path, viewport) {
    const page = await context.newPage();
    if (viewport) await page.setViewportSize(viewport);
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    await page.goto(base + path);
    await settled(page);
    return page;
  };
}

/** Waits until the page has drawn the state of its current URL. */
export const settled = (page) => page.waitForFunction(
  () => document.getElementById('app').dataset.renderedUrl === location.href);
