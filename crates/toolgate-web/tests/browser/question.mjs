// Answers the `question` tool's questions on the approval page in headless
// Chromium, as a person would. Started by tests/browser.rs, which owns the
// server and the questions and checks the replies.
//
// argv: PAGE_URL (with ?token=) IDS_JSON
//   IDS_JSON: {"pick": id, "elsewhere": id}
// stdout protocol: prints "loaded" once both questions show; then reads one
// line from stdin: the id of a question asked after "loaded" (by then the
// "elsewhere" one has been withdrawn by the test).
// TOOLGATE_QUESTION_SCREENSHOT=path keeps a screenshot of the questions.
import { check, cues, launch } from "./common.mjs";

const [pageUrl, idsJson] = process.argv.slice(2);
const ids = JSON.parse(idsJson);
const lines = cues();

const { browser, page } = await launch();
try {
  await page.goto(pageUrl);
  await page.waitForURL((u) => !u.search.includes("token="));
  const pick = page.locator(`#question-${ids.pick}`);
  await pick.waitFor();
  await page.locator(`#question-${ids.elsewhere}`).waitFor();
  check(await pick.locator("input[type=radio]").count() === 2, "two options as radio choices");
  check(await page.locator("#questions-section").isVisible(), "the questions section shows");
  if (process.env.TOOLGATE_QUESTION_SCREENSHOT) {
    await page.screenshot({ path: process.env.TOOLGATE_QUESTION_SCREENSHOT, fullPage: true });
  }
  console.log("loaded");

  // The test withdraws "elsewhere" (answered on another channel) and asks a
  // new question: the first leaves the page, the second appears, live.
  const live = (await lines.next()).value.trim();
  await page.locator(`#question-${ids.elsewhere}`).waitFor({ state: "detached" });
  const card = page.locator(`#question-${live}`);
  await card.waitFor();

  // Decline the live one with a reason, pressing Enter in the reason field
  // (which must decline, not send the empty answer).
  await card.locator("input[name=message]").fill("not now, ask again after lunch");
  await card.locator("input[name=message]").press("Enter");
  await card.waitFor({ state: "detached" });

  // Sending without an answer to question 2 is refused, naming it; the card stays.
  await pick.locator("label.option", { hasText: "postgres" }).click();
  await pick.locator("button[value=answer]").click();
  await pick.locator(".error", { hasText: "answer 2" }).waitFor();
  check(await pick.count() === 1, "a refused reply answers nothing");

  // Pick an option and write the second answer.
  await pick.locator("input[name=answer_2]").fill("accounts");
  await pick.locator("button[value=answer]").click();
  await pick.waitFor({ state: "detached" });
  check(await page.locator("#questions-section").isHidden(), "no questions left: section hidden");
  console.log("answered");
} finally {
  await browser.close();
}
process.exit(0);
