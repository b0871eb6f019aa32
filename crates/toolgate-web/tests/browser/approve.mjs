// Drives the approval page in headless Chromium, as a person would. Started by
// tests/browser.rs, which owns the server and the asks and checks the answers.
//
// argv: PAGE_URL (with ?token=) IDS_JSON SCREENSHOT_PATH
//   IDS_JSON: {"once": id, "reject": id, "destructive": id, "edit": id, "foreign": id}
// stdout protocol: prints "loaded" once the page shows the asks; then reads one
// line from stdin (the live ask's resource text, created after "loaded").
import { check, cues, launch } from "./common.mjs";
import http from "node:http";

const [pageUrl, idsJson, screenshot] = process.argv.slice(2);
const ids = JSON.parse(idsJson);
const base = new URL(pageUrl).origin;
const lines = cues();

const { browser, context, page } = await launch();
try {
  // The printed URL: token exchanged for the cookie, then the token leaves the URL.
  await page.goto(pageUrl);
  await page.waitForURL((u) => !u.search.includes("token="));
  await page.waitForSelector(`#ask-${ids.edit} .diff .add`);
  const cookies = await context.cookies();
  check(cookies.length === 1 && cookies[0].httpOnly && cookies[0].sameSite === "Strict",
    "one HttpOnly SameSite=Strict cookie: " + JSON.stringify(cookies));
  check(await page.locator(`#ask-${ids.destructive} button[value=always]`).count() === 0,
    "no 'always' for a destructive request");
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log("loaded");

  // "Allow once".
  await page.click(`#ask-${ids.once} button[value=once]`);
  await page.waitForSelector(`#ask-${ids.once}`, { state: "detached" });

  // Reject with a message, sent with Enter in the message field: that must
  // reject, not press the form's first button ("Allow once").
  await page.fill(`#ask-${ids.reject} input[name=message]`, "use a pull request instead");
  await page.press(`#ask-${ids.reject} input[name=message]`, "Enter");
  await page.waitForSelector(`#ask-${ids.reject}`, { state: "detached" });

  // Destructive: the first click only arms the button; the second sends it.
  await page.click(`#ask-${ids.destructive} button[value=once]`);
  await page.waitForSelector(`#ask-${ids.destructive} button.armed`);
  check(await page.locator(`#ask-${ids.destructive}`).count() === 1, "one click did not answer");
  await page.click(`#ask-${ids.destructive} button.armed`);
  await page.waitForSelector(`#ask-${ids.destructive}`, { state: "detached" });

  // An ask created now shows up live (server-sent events), without a reload.
  const live = (await lines.next()).value;
  const card = page.locator("article.ask", { hasText: live });
  await card.waitFor();
  await card.locator("button[value=once]").click();
  await card.waitFor({ state: "detached" });

  // Another origin (a page on another loopback port) posts an answer with the
  // browser's cookie: the page refuses it.
  const evil = http.createServer((_, res) => {
    res.setHeader("content-type", "text/html");
    res.end(`<form method="post" action="${base}/approvals/pending/${ids.foreign}/answer">
      <input name="answer" value="once"></form><script>document.forms[0].submit()</script>`);
  });
  await new Promise((r) => evil.listen(0, "127.0.0.1", r));
  const evilPage = await context.newPage();
  const answered = evilPage.waitForResponse((r) => r.url().includes("/answer"));
  await evilPage.goto(`http://127.0.0.1:${evil.address().port}/`);
  const status = (await answered).status();
  check(status === 403, "cross-origin answer refused, got " + status);
  evil.close();

  // Without the script, Enter in the reject message must not press the first
  // button ("Allow once"): the form has a disabled default button, so nothing
  // is sent and the ask stays pending (tests/browser.rs checks).
  const plain = await browser.newContext({ javaScriptEnabled: false });
  const plainPage = await plain.newPage();
  await plainPage.goto(pageUrl);
  const message = plainPage.locator(`#ask-${ids.foreign} input[name=message]`);
  await message.fill("typed, then Enter");
  await message.press("Enter");
  await plainPage.waitForTimeout(300);
  check(new URL(plainPage.url()).pathname === "/", "no form was submitted: " + plainPage.url());
  await plain.close();
  console.log("cross-origin refused");
} finally {
  await browser.close();
}
process.exit(0);
