// toolgate for OpenCode: every tool call is judged by `toolgate hook opencode`
// before it runs. Installed by `toolgate hook install opencode`; do not edit
// (`toolgate hook uninstall opencode` removes it).
//
// It never fails open: a missing toolgate, a crash, a timeout, an answer that
// is not an allow — each throws, which blocks the call.
import { spawnSync } from "node:child_process";

const TOOLGATE = "__TOOLGATE__";
const TIMEOUT_MS = 30000;

function ask(payload) {
  const run = spawnSync(TOOLGATE, ["hook", "opencode"], {
    input: JSON.stringify(payload),
    encoding: "utf8",
    timeout: TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error) {
    throw new Error(`toolgate: cannot run ${TOOLGATE}: ${run.error.message}; the call is blocked`);
  }
  if (run.status !== 0) {
    const why = (run.stderr || "").trim() || `toolgate exited with status ${run.status}`;
    throw new Error(why);
  }
  return run.stdout;
}

export const Toolgate = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    const stdout = ask({
      event: "tool.execute.before",
      tool: input.tool,
      sessionID: input.sessionID,
      callID: input.callID,
      args: output.args,
      directory,
      cwd: process.cwd(),
    });
    let answer;
    try {
      answer = JSON.parse(stdout);
    } catch {
      throw new Error("toolgate: unreadable answer; the call is blocked");
    }
    if (!answer || answer.decision !== "allow") {
      throw new Error((answer && answer.reason) || "toolgate: not allowed");
    }
    if (answer.args && typeof answer.args === "object") {
      for (const key of Object.keys(output.args)) delete output.args[key];
      Object.assign(output.args, answer.args);
    }
  },
  "tool.execute.after": async (input, output) => {
    try {
      ask({
        event: "tool.execute.after",
        tool: input.tool,
        sessionID: input.sessionID,
        callID: input.callID,
        args: {},
        output: typeof output.output === "string" ? output.output.slice(0, 400) : null,
        directory,
        cwd: process.cwd(),
      });
    } catch {
      // The outcome is recorded when it can be; the call already ran.
    }
  },
});
