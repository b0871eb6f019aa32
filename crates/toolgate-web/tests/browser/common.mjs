// What every browser script shares: the system Chromium, headless, and a page
// with the test timeouts; the script's cues on stdin; a failed check.
import { chromium } from "playwright-core";
import readline from "node:readline";

/** Throws, naming what the page did not do. */
export function check(cond, what) {
  if (!cond) throw new Error("browser check failed: " + what);
}

/** The lines the Rust test writes to this script's stdin. */
export function cues() {
  return readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
}

/** Chromium (CHROMIUM or /usr/bin/chromium), a context and a first page. */
export async function launch() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10000);
  return { browser, context, page };
}
