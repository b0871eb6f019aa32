//! A shell call rewritten to run inside toolgate's sandbox, for the agents
//! that run an input the hook changed.

use std::path::Path;

use serde_json::Value;

/// The shell command of a call and the input field it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellField {
    /// The input field holding the command (a string).
    pub field: &'static str,
    /// The command as the agent would run it.
    pub command: String,
    /// The directory it runs in, when known.
    pub workdir: Option<String>,
}

/// A rewritten shell call.
#[derive(Clone, Debug, PartialEq)]
pub struct Rewrite {
    /// The agent's input with the command replaced.
    pub input: Value,
    /// The new command line the agent runs.
    pub command: String,
    /// What runs inside the sandbox (`bash -c '…'`): judged again before the
    /// rewrite is answered, so a rewrite never widens what was judged.
    pub confined: String,
}

pub use toolgate_core::shell_text::quote as shell_quote;

/// `input` with its shell command (`shell.field`) replaced by
/// `TOOLGATE sandbox exec --root ROOT -- bash -c 'COMMAND'`; `None` when
/// the input has no such string field.
pub fn sandbox_rewrite(
    input: &Value,
    shell: &ShellField,
    toolgate: &Path,
    root: &Path,
) -> Option<Rewrite> {
    let current = input.get(shell.field)?.as_str()?;
    if current != shell.command {
        return None;
    }
    let confined = format!("bash -c {}", shell_quote(&shell.command));
    let command = format!(
        "{} sandbox exec --root {} -- {confined}",
        shell_quote(&toolgate.display().to_string()),
        shell_quote(&root.display().to_string()),
    );
    let mut rewritten = input.clone();
    let obj = rewritten.as_object_mut()?;
    obj.insert(shell.field.to_string(), Value::String(command.clone()));
    Some(Rewrite {
        input: rewritten,
        command,
        confined,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rewrite_keeps_the_other_fields_and_wraps_the_command() {
        let input =
            json!({"command": "cargo test && echo 'ok'", "description": "tests", "timeout": 5});
        let shell = ShellField {
            field: "command",
            command: "cargo test && echo 'ok'".into(),
            workdir: None,
        };
        let r = sandbox_rewrite(
            &input,
            &shell,
            Path::new("/opt/tg bin/toolgate"),
            Path::new("/ws"),
        )
        .unwrap();
        assert_eq!(
            r.command,
            r"'/opt/tg bin/toolgate' sandbox exec --root /ws -- bash -c 'cargo test && echo '\''ok'\'''"
        );
        assert_eq!(r.confined, r"bash -c 'cargo test && echo '\''ok'\'''");
        assert_eq!(r.input["description"], "tests");
        assert_eq!(r.input["timeout"], 5);
        assert_eq!(r.input["command"], r.command.as_str());
    }

    #[test]
    fn no_rewrite_when_the_field_changed_or_is_not_text() {
        let shell = ShellField {
            field: "command",
            command: "ls".into(),
            workdir: None,
        };
        let t = Path::new("/t");
        assert!(sandbox_rewrite(&json!({"command": "pwd"}), &shell, t, t).is_none());
        assert!(sandbox_rewrite(&json!({"command": ["ls"]}), &shell, t, t).is_none());
    }
}
