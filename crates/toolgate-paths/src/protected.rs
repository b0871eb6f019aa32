//! Protected paths: places where a write changes the gate itself or makes later
//! commands run code.
//!
//! This module states facts and decides nothing: [`ProtectedPaths::check`] says
//! whether a path is protected and why. The policy makes such a write at least
//! `execute`, never lets a mode or a bare wildcard allow it, and denies writes
//! to toolgate's own config and data; the sandbox keeps the same places
//! read-only.
//!
//! The table [`PROTECTED`] is data. Each entry is anchored in one of three
//! ways: anywhere in a path (a `.git` directory at any depth), in the home
//! directory (`~/.bashrc`), or at an absolute place (`/var/spool/cron/`).
//! Names are compared case-insensitively (ASCII), since on a case-insensitive
//! file system `.GIT/config` is `.git/config`. Toolgate's own files whose place
//! depends on the machine — the user, managed and session config files and the
//! data directory — are added by [`ProtectedPaths::new`].
//!
//! ```
//! use std::path::Path;
//! use toolgate_paths::protected::{ProtectedClass, ProtectedPaths};
//! let p = ProtectedPaths::new("/home/u", ["/home/u/.local/share/toolgate".into()]);
//! let hit = p.check(Path::new("/ws/.git/hooks/pre-commit")).unwrap();
//! assert_eq!(hit.entry, ".git/");
//! assert_eq!(hit.class, ProtectedClass::RunsCode);
//! assert!(p.check(Path::new("/ws/.gitignore")).is_some());
//! assert!(p.check(Path::new("/ws/.git/objects/ab/cd")).is_none());
//! let own = p.check(Path::new("/home/u/.local/share/toolgate/state.db")).unwrap();
//! assert_eq!(own.class, ProtectedClass::Toolgate);
//! ```

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// Where an entry of the table is anchored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// The entry's names may appear at any depth of a path.
    Anywhere,
    /// The entry's names follow the home directory.
    Home,
    /// The entry's names follow `/`.
    Root,
}

/// What a write to a protected path would do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProtectedClass {
    /// It changes toolgate's own config, trust records or data.
    Toolgate,
    /// It makes later commands (a shell, git, an editor, CI, another agent,
    /// a scheduler) run code.
    RunsCode,
}

/// One entry of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtectedEntry {
    /// The entry as people write it (`.git/`, `~/.bashrc`); a trailing `/`
    /// means the directory and everything beneath it.
    pub display: &'static str,
    /// Where its names are anchored.
    pub anchor: Anchor,
    /// Its path components, lowercase.
    pub names: &'static [&'static str],
    /// Whether it covers everything beneath (a directory) or only itself.
    pub beneath: bool,
    /// What it is.
    pub class: ProtectedClass,
    /// Why a write there is protected, in words a person reads.
    pub why: &'static str,
    /// The program that loads or runs what is there on its own.
    pub program: &'static str,
    /// Where that program documents it.
    pub source: &'static str,
    /// The places beneath the entry that are not protected (see [`Inside`]).
    pub inside: Inside,
}

/// What beneath a directory entry is not protected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inside {
    /// Everything beneath is protected.
    All,
    /// A git directory: its ordinary state (objects, refs, logs, the index,
    /// `HEAD`…, see [`crate::git_dir::is_inert`]) is written by every commit
    /// and runs nothing; its config, hooks, `info/`, `objects/info/`
    /// (alternates), `modules/`, `worktrees/` and whatever else stay
    /// protected.
    GitData,
}

impl ProtectedEntry {
    /// The entry with the program that loads it and where that is documented.
    const fn by(mut self, program: &'static str, source: &'static str) -> Self {
        self.program = program;
        self.source = source;
        self
    }

    /// The entry with what beneath it is not protected.
    const fn with_inside(mut self, inside: Inside) -> Self {
        self.inside = inside;
        self
    }

    /// Whether the entry protects a path whose components below the entry's
    /// names are `rest`.
    fn covers(&self, rest: &[String]) -> bool {
        match self.inside {
            Inside::All => true,
            Inside::GitData => !crate::git_dir::is_inert(rest),
        }
    }
}

const fn entry(
    display: &'static str,
    anchor: Anchor,
    names: &'static [&'static str],
    beneath: bool,
    class: ProtectedClass,
    why: &'static str,
) -> ProtectedEntry {
    ProtectedEntry {
        display,
        anchor,
        names,
        beneath,
        class,
        why,
        program: "",
        source: "",
        inside: Inside::All,
    }
}

/// A file anywhere in a path that makes a program run code.
const fn file(
    display: &'static str,
    names: &'static [&'static str],
    why: &'static str,
) -> ProtectedEntry {
    entry(display, Anywhere, names, false, RunsCode, why)
}

/// A directory anywhere in a path, and everything beneath it, that makes a
/// program run code.
const fn dir(
    display: &'static str,
    names: &'static [&'static str],
    why: &'static str,
) -> ProtectedEntry {
    entry(display, Anywhere, names, true, RunsCode, why)
}

use Anchor::{Anywhere, Home, Root};
use ProtectedClass::{RunsCode, Toolgate};

const SHELL_STARTUP: &str = "a shell start-up file: every new shell runs it";
const AGENT: &str = "another agent's config or hooks, which that agent runs or obeys";
const AGENT_INSTRUCTIONS: &str = "an agent's instructions file: every later session of that agent loads it on its own and obeys it (run this, fetch that)";
const AGENTS_MD: &str = "https://developers.openai.com/codex/guides/agents-md";
const CLAUDE_MEMORY: &str = "https://docs.anthropic.com/en/docs/claude-code/memory";
const CI: &str = "a CI workflow file: CI runs it with the repository's secrets";
const SCHEDULER: &str = "a per-user service or scheduler file: the system runs it later";
const HOOKS: &str = "a git hook manager's config: git runs the commands it names on commit or push";
const ON_CD: &str =
    "a file the shell loads on entering the directory: the commands or tools it names run then";
const EDITOR: &str =
    "an editor's project config, which can name programs the editor runs when it opens the project";
const TOOL_START: &str = "a file a program loads at its start, which can make it run other code";
const DEV_ENV: &str =
    "a development environment's config: the commands it names run when the environment starts";
const DEPLOY: &str =
    "a hosting service's build config: the service runs the commands it names on every push";
const CI_ACTION: &str =
    "a repository's own CI action, which its workflows run with the repository's secrets";
const TOOLCHAIN: &str = "a build tool's config, which can name the programs it runs in place of the compiler or toolchain";

const GIT_LAYOUT: &str = "https://git-scm.com/docs/gitrepository-layout";
const SHELL_DOC: &str = "bash(1) INVOCATION; zsh(1) STARTUP/SHUTDOWN FILES";
const SYSTEMD_USER: &str = "systemd.unit(5), user unit search path";
const CRON: &str = "crontab(5), cron(8)";
const LEFTHOOK: &str = "https://lefthook.dev/configuration/";
const LINT_STAGED: &str = "https://github.com/lint-staged/lint-staged#configuration";
const SIMPLE_GIT_HOOKS: &str = "https://github.com/toplenboren/simple-git-hooks#readme";
const MISE: &str = "https://mise.jdx.dev/configuration.html";
const VSCODE: &str = "https://code.visualstudio.com/docs/configure/settings#_workspace-settings";
const CLOUD_BUILD: &str = "https://cloud.google.com/build/docs/build-config-file-schema";
const AZURE: &str = "https://learn.microsoft.com/azure/devops/pipelines/yaml-schema/";
const WOODPECKER: &str = "https://woodpecker-ci.org/docs/usage/workflow-syntax";
const DEVCONTAINER: &str = "https://containers.dev/implementors/json_reference/";
const OPENCODE: &str = "https://opencode.ai/docs/config/";
const CRUSH: &str = "https://github.com/charmbracelet/crush#configuration";
const APPVEYOR: &str = "https://www.appveyor.com/docs/appveyor-yml/";
const CIRRUS: &str = "https://cirrus-ci.org/guide/writing-tasks/";
const SOURCEHUT: &str = "https://man.sr.ht/builds.sr.ht/";
const RAILWAY: &str = "https://docs.railway.com/reference/config-as-code";
const NVIM_EXRC: &str = "https://neovim.io/doc/user/options.html#'exrc'";
const EMACS_DIR_LOCALS: &str =
    "https://www.gnu.org/software/emacs/manual/html_node/emacs/Directory-Variables.html";
const R_STARTUP: &str = "https://stat.ethz.ch/R-manual/R-devel/library/base/html/Startup.html";
const SBT: &str = "https://www.scala-sbt.org/1.x/docs/Command-Line-Reference.html";
const CARGO_CONFIG: &str = "https://doc.rust-lang.org/cargo/reference/config.html";
const RUSTUP: &str = "https://rust-lang.github.io/rustup/overrides.html#the-toolchain-file";
const TERRAFORM_CLI: &str = "https://developer.hashicorp.com/terraform/cli/config/config-file";
const BUN: &str = "https://bun.sh/docs/runtime/bunfig";
const PNPMFILE: &str = "https://pnpm.io/pnpmfile";
const ZSH_AUTOENV: &str = "https://github.com/Tarrasch/zsh-autoenv#readme";

/// The protected places whose position does not depend on the machine.
pub const PROTECTED: &[ProtectedEntry] = &[
    // toolgate's own places
    entry(".toolgate/", Anywhere, &[".toolgate"], true, Toolgate, "toolgate's project config: a write there changes the gate itself")
        .by("toolgate", "the README's Config section"),
    entry("~/.config/toolgate/", Home, &[".config", "toolgate"], true, Toolgate, "toolgate's user config: a write there changes the gate itself")
        .by("toolgate", "the README's Config section"),
    entry("~/.local/share/toolgate/", Home, &[".local", "share", "toolgate"], true, Toolgate, "toolgate's data directory (trust records, saved approvals, audit log)")
        .by("toolgate", "the README's Config section"),
    entry("/etc/toolgate/", Root, &["etc", "toolgate"], true, Toolgate, "toolgate's managed config: a write there changes the gate itself")
        .by("toolgate", "the README's Config section"),
    // git
    entry(".git/", Anywhere, &[".git"], true, RunsCode, "the repository's git internals (config, hooks, alternates), which git commands obey and run")
        .by("git", GIT_LAYOUT)
        .with_inside(Inside::GitData),
    entry(".gitignore", Anywhere, &[".gitignore"], false, RunsCode, "git's ignore rules, which decide what of the location a write may change unasked")
        .by("git (and toolgate's judgement of dot-paths)", "https://git-scm.com/docs/gitignore"),
    entry("~/.gitconfig", Home, &[".gitconfig"], false, RunsCode, "the user's git config, which can name programs git runs")
        .by("git", "https://git-scm.com/docs/git-config#FILES"),
    entry("~/.config/git/", Home, &[".config", "git"], true, RunsCode, "the user's git config, which can name programs git runs")
        .by("git", "https://git-scm.com/docs/git-config#FILES"),
    // the shell
    entry(".envrc", Anywhere, &[".envrc"], false, RunsCode, "a direnv file: the shell runs it on entering the directory")
        .by("direnv", "direnv(1)"),
    entry(".direnv/", Anywhere, &[".direnv"], true, RunsCode, "direnv's state, which the shell loads on entering the directory")
        .by("direnv", "direnv-stdlib(1)"),
    entry("~/.bashrc", Home, &[".bashrc"], false, RunsCode, SHELL_STARTUP).by("bash", SHELL_DOC),
    entry("~/.bash_profile", Home, &[".bash_profile"], false, RunsCode, SHELL_STARTUP).by("bash", SHELL_DOC),
    entry("~/.bash_login", Home, &[".bash_login"], false, RunsCode, SHELL_STARTUP).by("bash", SHELL_DOC),
    entry("~/.bash_logout", Home, &[".bash_logout"], false, RunsCode, SHELL_STARTUP).by("bash", SHELL_DOC),
    entry("~/.profile", Home, &[".profile"], false, RunsCode, SHELL_STARTUP).by("sh, bash", SHELL_DOC),
    entry("~/.zshrc", Home, &[".zshrc"], false, RunsCode, SHELL_STARTUP).by("zsh", SHELL_DOC),
    entry("~/.zshenv", Home, &[".zshenv"], false, RunsCode, SHELL_STARTUP).by("zsh", SHELL_DOC),
    entry("~/.zprofile", Home, &[".zprofile"], false, RunsCode, SHELL_STARTUP).by("zsh", SHELL_DOC),
    entry("~/.zlogin", Home, &[".zlogin"], false, RunsCode, SHELL_STARTUP).by("zsh", SHELL_DOC),
    entry("~/.config/fish/", Home, &[".config", "fish"], true, RunsCode, SHELL_STARTUP)
        .by("fish", "https://fishshell.com/docs/current/language.html#configuration-files"),
    entry("~/.ssh/config", Home, &[".ssh", "config"], false, RunsCode, "ssh's config, which can name programs ssh runs (ProxyCommand, LocalCommand)")
        .by("ssh", "ssh_config(5)"),
    entry(".rvmrc", Anywhere, &[".rvmrc"], false, RunsCode, ON_CD).by("RVM", "https://rvm.io/workflow/rvmrc"),
    file("mise.toml", &["mise.toml"], ON_CD).by("mise", MISE),
    file("mise.local.toml", &["mise.local.toml"], ON_CD).by("mise", MISE),
    file(".mise.toml", &[".mise.toml"], ON_CD).by("mise", MISE),
    file(".mise.local.toml", &[".mise.local.toml"], ON_CD).by("mise", MISE),
    dir(".mise/", &[".mise"], ON_CD).by("mise", MISE),
    file("mise/config.toml", &["mise", "config.toml"], ON_CD).by("mise", MISE),
    dir(".config/mise/", &[".config", "mise"], ON_CD).by("mise", MISE),
    file(".autoenv.zsh", &[".autoenv.zsh"], ON_CD).by("zsh-autoenv", ZSH_AUTOENV),
    file(".autoenv_leave.zsh", &[".autoenv_leave.zsh"], ON_CD).by("zsh-autoenv", ZSH_AUTOENV),
    // other agents
    entry(".claude/", Anywhere, &[".claude"], true, RunsCode, AGENT)
        .by("Claude Code", "https://docs.anthropic.com/en/docs/claude-code/settings"),
    entry(".codex/", Anywhere, &[".codex"], true, RunsCode, AGENT)
        .by("Codex CLI", "https://github.com/openai/codex/blob/main/docs/config.md"),
    entry(".gemini/", Anywhere, &[".gemini"], true, RunsCode, AGENT)
        .by("Gemini CLI", "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/configuration.md"),
    entry(".cursor/", Anywhere, &[".cursor"], true, RunsCode, AGENT)
        .by("Cursor", "https://docs.cursor.com/context/model-context-protocol"),
    entry(".mcp.json", Anywhere, &[".mcp.json"], false, RunsCode, AGENT)
        .by("Claude Code (project MCP servers)", "https://docs.anthropic.com/en/docs/claude-code/mcp"),
    file("opencode.json", &["opencode.json"], AGENT).by("OpenCode", OPENCODE),
    file("opencode.jsonc", &["opencode.jsonc"], AGENT).by("OpenCode", OPENCODE),
    dir(".opencode/", &[".opencode"], AGENT).by("OpenCode", OPENCODE),
    dir(".continue/", &[".continue"], AGENT).by("Continue", "https://docs.continue.dev/customize/deep-dives/mcp"),
    dir(".roo/", &[".roo"], AGENT).by("Roo Code", "https://docs.roocode.com/features/mcp/using-mcp-in-roo"),
    file(".roomodes", &[".roomodes"], AGENT).by("Roo Code", "https://docs.roocode.com/features/custom-modes"),
    dir(".clinerules/", &[".clinerules"], AGENT).by("Cline", "https://docs.cline.bot/features/cline-rules"),
    dir(".windsurf/", &[".windsurf"], AGENT).by("Windsurf", "https://docs.windsurf.com/windsurf/cascade/workflows"),
    dir(".kiro/", &[".kiro"], AGENT).by("Kiro", "https://kiro.dev/docs/hooks/"),
    dir(".amazonq/", &[".amazonq"], AGENT)
        .by("Amazon Q Developer", "https://docs.aws.amazon.com/amazonq/latest/qdeveloper-ug/command-line-mcp-configuration.html"),
    dir(".junie/", &[".junie"], AGENT).by("JetBrains Junie", "https://www.jetbrains.com/help/junie/model-context-protocol-mcp.html"),
    dir(".qwen/", &[".qwen"], AGENT).by("Qwen Code", "https://github.com/QwenLM/qwen-code/blob/main/docs/cli/configuration.md"),
    file("crush.json", &["crush.json"], AGENT).by("Crush", CRUSH),
    file(".crush.json", &[".crush.json"], AGENT).by("Crush", CRUSH),
    file(".aider.conf.yml", &[".aider.conf.yml"], AGENT)
        .by("aider (lint-cmd, test-cmd run after each edit)", "https://aider.chat/docs/config/aider_conf.html"),
    // agents' instruction files, loaded into every later session on their own
    file("AGENTS.md", &["agents.md"], AGENT_INSTRUCTIONS).by("Codex, OpenCode, Amp, Cursor, Zed…", AGENTS_MD),
    file("AGENTS.override.md", &["agents.override.md"], AGENT_INSTRUCTIONS).by("Codex", AGENTS_MD),
    file("CLAUDE.md", &["claude.md"], AGENT_INSTRUCTIONS).by("Claude Code", CLAUDE_MEMORY),
    file("CLAUDE.local.md", &["claude.local.md"], AGENT_INSTRUCTIONS).by("Claude Code", CLAUDE_MEMORY),
    file("GEMINI.md", &["gemini.md"], AGENT_INSTRUCTIONS)
        .by("Gemini CLI", "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/gemini-md.md"),
    file("CRUSH.md", &["crush.md"], AGENT_INSTRUCTIONS).by("Crush", CRUSH),
    file("CRUSH.local.md", &["crush.local.md"], AGENT_INSTRUCTIONS).by("Crush", CRUSH),
    file("QWEN.md", &["qwen.md"], AGENT_INSTRUCTIONS)
        .by("Qwen Code", "https://qwenlm.github.io/qwen-code-docs/en/users/features/memory/"),
    file("WARP.md", &["warp.md"], AGENT_INSTRUCTIONS)
        .by("Warp", "https://docs.warp.dev/agents/capabilities/rules"),
    file("AGENT.md", &["agent.md"], AGENT_INSTRUCTIONS)
        .by("Amp (the name before AGENTS.md, still read)", "https://ampcode.com/manual#AGENTS.md"),
    file("AmazonQ.md", &["amazonq.md"], AGENT_INSTRUCTIONS).by(
        "Amazon Q Developer CLI (the default agent's context)",
        "https://docs.aws.amazon.com/amazonq/latest/qdeveloper-ug/command-line-context.html",
    ),
    // editors
    entry(".vscode/settings.json", Anywhere, &[".vscode", "settings.json"], false, RunsCode, "the editor's workspace settings, which can name programs the editor runs")
        .by("VS Code", VSCODE),
    entry(".vscode/tasks.json", Anywhere, &[".vscode", "tasks.json"], false, RunsCode, "the editor's workspace tasks, which the editor runs (also on folder open)")
        .by("VS Code", "https://code.visualstudio.com/docs/debugtest/tasks"),
    file(".vscode/mcp.json", &[".vscode", "mcp.json"], AGENT)
        .by("VS Code (MCP servers)", "https://code.visualstudio.com/docs/copilot/chat/mcp-servers"),
    file(".vscode/launch.json", &[".vscode", "launch.json"], EDITOR)
        .by("VS Code (debug launch configurations)", "https://code.visualstudio.com/docs/debugtest/debugging-configuration"),
    dir(".zed/", &[".zed"], EDITOR).by("Zed (settings, tasks, context servers)", "https://zed.dev/docs/configuring-zed"),
    dir(".idea/", &[".idea"], EDITOR).by("JetBrains IDEs (run configurations)", "https://www.jetbrains.com/help/idea/run-debug-configuration.html"),
    dir(".fleet/", &[".fleet"], EDITOR).by("JetBrains Fleet", "https://www.jetbrains.com/help/fleet/run-configurations.html"),
    dir(".helix/", &[".helix"], EDITOR).by("Helix (language servers)", "https://docs.helix-editor.com/languages.html"),
    file(".nvim.lua", &[".nvim.lua"], EDITOR).by("Neovim ('exrc')", NVIM_EXRC),
    file(".nvimrc", &[".nvimrc"], EDITOR).by("Neovim ('exrc')", NVIM_EXRC),
    file(".exrc", &[".exrc"], EDITOR).by("Vim, Neovim ('exrc')", NVIM_EXRC),
    file(".lazy.lua", &[".lazy.lua"], EDITOR).by("lazy.nvim (local plugin spec)", "https://lazy.folke.io/configuration"),
    file(".dir-locals.el", &[".dir-locals.el"], EDITOR).by("Emacs (eval variables)", EMACS_DIR_LOCALS),
    file(".dir-locals-2.el", &[".dir-locals-2.el"], EDITOR).by("Emacs (eval variables)", EMACS_DIR_LOCALS),
    // development environments
    dir(".devcontainer/", &[".devcontainer"], DEV_ENV).by("Dev Containers (postCreateCommand…)", DEVCONTAINER),
    file(".devcontainer.json", &[".devcontainer.json"], DEV_ENV).by("Dev Containers", DEVCONTAINER),
    file("devcontainer.json", &["devcontainer.json"], DEV_ENV).by("Dev Containers", DEVCONTAINER),
    file(".gitpod.yml", &[".gitpod.yml"], DEV_ENV).by("Gitpod (tasks)", "https://www.gitpod.io/docs/configure/workspaces/tasks"),
    file(".replit", &[".replit"], DEV_ENV).by("Replit (run, onBoot)", "https://docs.replit.com/replit-workspace/configuring-repl"),
    file("replit.nix", &["replit.nix"], DEV_ENV).by("Replit", "https://docs.replit.com/replit-workspace/configuring-repl"),
    file("devbox.json", &["devbox.json"], DEV_ENV).by("Devbox (init_hook)", "https://www.jetify.com/docs/devbox/configuration/"),
    // programs that load a file of the directory at their start
    file(".yarnrc.yml", &[".yarnrc.yml"], TOOL_START).by("Yarn (yarnPath, plugins)", "https://yarnpkg.com/configuration/yarnrc"),
    file(".yarnrc", &[".yarnrc"], TOOL_START).by("Yarn 1 (yarn-path)", "https://classic.yarnpkg.com/en/docs/yarnrc"),
    file(".pnpmfile.cjs", &[".pnpmfile.cjs"], TOOL_START).by("pnpm (hooks)", PNPMFILE),
    file(".pnpmfile.mjs", &[".pnpmfile.mjs"], TOOL_START).by("pnpm (hooks)", PNPMFILE),
    file("bunfig.toml", &["bunfig.toml"], TOOL_START).by("Bun (preload)", BUN),
    file(".bunfig.toml", &[".bunfig.toml"], TOOL_START).by("Bun (preload)", BUN),
    file(".Rprofile", &[".rprofile"], TOOL_START).by("R", R_STARTUP),
    file(".Renviron", &[".renviron"], TOOL_START).by("R (R_PROFILE_USER…)", R_STARTUP),
    file(".irbrc", &[".irbrc"], TOOL_START).by("IRB", "https://ruby.github.io/irb/#label-Configuration"),
    file(".pryrc", &[".pryrc"], TOOL_START).by("Pry", "https://github.com/pry/pry/wiki/Pry-rc"),
    file(".pdbrc", &[".pdbrc"], TOOL_START).by("Python's pdb", "https://docs.python.org/3/library/pdb.html"),
    file(".gdbinit", &[".gdbinit"], TOOL_START).by("GDB", "https://sourceware.org/gdb/current/onlinedocs/gdb.html/Startup.html"),
    file(".lldbinit", &[".lldbinit"], TOOL_START).by("LLDB", "https://lldb.llvm.org/man/lldb.html#configuration-files"),
    file(".ghci", &[".ghci"], TOOL_START).by("GHCi", "https://downloads.haskell.org/ghc/latest/docs/users_guide/ghci.html#the-ghci-and-haskeline-files"),
    file(".jvmopts", &[".jvmopts"], TOOL_START).by("sbt launcher (-javaagent…)", SBT),
    file("gradle.properties", &["gradle.properties"], TOOL_START).by(
        "Gradle (org.gradle.jvmargs: -javaagent…, org.gradle.java.home)",
        "https://docs.gradle.org/current/userguide/build_environment.html#sec:gradle_configuration_properties",
    ),
    file(".sbtopts", &[".sbtopts"], TOOL_START).by("sbt launcher", SBT),
    dir(".mvn/", &[".mvn"], TOOLCHAIN).by("Maven (extensions.xml, jvm.config, wrapper)", "https://maven.apache.org/configure.html"),
    file("gradle/wrapper/gradle-wrapper.properties", &["gradle", "wrapper", "gradle-wrapper.properties"], TOOLCHAIN)
        .by("Gradle wrapper (distributionUrl)", "https://docs.gradle.org/current/userguide/gradle_wrapper.html"),
    file(".bazelrc", &[".bazelrc"], TOOLCHAIN).by("Bazel (--run_under, tool paths)", "https://bazel.build/run/bazelrc"),
    file(".cargo/config.toml", &[".cargo", "config.toml"], TOOLCHAIN).by("Cargo (runner, rustc-wrapper, linker)", CARGO_CONFIG),
    file(".cargo/config", &[".cargo", "config"], TOOLCHAIN).by("Cargo (runner, rustc-wrapper, linker)", CARGO_CONFIG),
    file("rust-toolchain.toml", &["rust-toolchain.toml"], TOOLCHAIN).by("rustup (toolchain path)", RUSTUP),
    file("rust-toolchain", &["rust-toolchain"], TOOLCHAIN).by("rustup (toolchain path)", RUSTUP),
    file(".terraformrc", &[".terraformrc"], TOOLCHAIN).by("Terraform (provider dev_overrides)", TERRAFORM_CLI),
    file("terraform.rc", &["terraform.rc"], TOOLCHAIN).by("Terraform (provider dev_overrides)", TERRAFORM_CLI),
    // git hook managers
    entry(".husky/", Anywhere, &[".husky"], true, RunsCode, "git hooks that husky points core.hooksPath at: git runs them on commit and push")
        .by("husky", "https://typicode.github.io/husky/"),
    entry(".pre-commit-config.yaml", Anywhere, &[".pre-commit-config.yaml"], false, RunsCode, "the pre-commit framework's hooks, which git runs on every commit")
        .by("pre-commit", "https://pre-commit.com/#plugins"),
    dir(".githooks/", &[".githooks"], HOOKS).by("git (core.hooksPath)", "https://git-scm.com/docs/githooks"),
    file("lefthook.yml", &["lefthook.yml"], HOOKS).by("Lefthook", LEFTHOOK),
    file("lefthook.yaml", &["lefthook.yaml"], HOOKS).by("Lefthook", LEFTHOOK),
    file("lefthook.json", &["lefthook.json"], HOOKS).by("Lefthook", LEFTHOOK),
    file("lefthook.toml", &["lefthook.toml"], HOOKS).by("Lefthook", LEFTHOOK),
    file("lefthook-local.yml", &["lefthook-local.yml"], HOOKS).by("Lefthook", LEFTHOOK),
    file("lefthook-local.yaml", &["lefthook-local.yaml"], HOOKS).by("Lefthook", LEFTHOOK),
    file(".lefthook.yml", &[".lefthook.yml"], HOOKS).by("Lefthook", LEFTHOOK),
    file(".lefthook.yaml", &[".lefthook.yaml"], HOOKS).by("Lefthook", LEFTHOOK),
    file(".lefthook-local.yml", &[".lefthook-local.yml"], HOOKS).by("Lefthook", LEFTHOOK),
    dir(".lefthook/", &[".lefthook"], HOOKS).by("Lefthook (script directory)", LEFTHOOK),
    file(".lintstagedrc", &[".lintstagedrc"], HOOKS).by("lint-staged", LINT_STAGED),
    file(".lintstagedrc.json", &[".lintstagedrc.json"], HOOKS).by("lint-staged", LINT_STAGED),
    file(".lintstagedrc.yaml", &[".lintstagedrc.yaml"], HOOKS).by("lint-staged", LINT_STAGED),
    file(".lintstagedrc.yml", &[".lintstagedrc.yml"], HOOKS).by("lint-staged", LINT_STAGED),
    file(".lintstagedrc.js", &[".lintstagedrc.js"], HOOKS).by("lint-staged", LINT_STAGED),
    file(".lintstagedrc.cjs", &[".lintstagedrc.cjs"], HOOKS).by("lint-staged", LINT_STAGED),
    file(".lintstagedrc.mjs", &[".lintstagedrc.mjs"], HOOKS).by("lint-staged", LINT_STAGED),
    file("lint-staged.config.js", &["lint-staged.config.js"], HOOKS).by("lint-staged", LINT_STAGED),
    file("lint-staged.config.cjs", &["lint-staged.config.cjs"], HOOKS).by("lint-staged", LINT_STAGED),
    file("lint-staged.config.mjs", &["lint-staged.config.mjs"], HOOKS).by("lint-staged", LINT_STAGED),
    file(".simple-git-hooks.json", &[".simple-git-hooks.json"], HOOKS).by("simple-git-hooks", SIMPLE_GIT_HOOKS),
    file(".simple-git-hooks.js", &[".simple-git-hooks.js"], HOOKS).by("simple-git-hooks", SIMPLE_GIT_HOOKS),
    file(".simple-git-hooks.cjs", &[".simple-git-hooks.cjs"], HOOKS).by("simple-git-hooks", SIMPLE_GIT_HOOKS),
    file("simple-git-hooks.json", &["simple-git-hooks.json"], HOOKS).by("simple-git-hooks", SIMPLE_GIT_HOOKS),
    file("simple-git-hooks.js", &["simple-git-hooks.js"], HOOKS).by("simple-git-hooks", SIMPLE_GIT_HOOKS),
    file("simple-git-hooks.cjs", &["simple-git-hooks.cjs"], HOOKS).by("simple-git-hooks", SIMPLE_GIT_HOOKS),
    file(".overcommit.yml", &[".overcommit.yml"], HOOKS).by("Overcommit", "https://github.com/sds/overcommit#configuration"),
    // CI
    entry(".github/workflows/", Anywhere, &[".github", "workflows"], true, RunsCode, CI)
        .by("GitHub Actions", "https://docs.github.com/actions/writing-workflows/workflow-syntax-for-github-actions"),
    entry(".github/actions/", Anywhere, &[".github", "actions"], true, RunsCode, CI_ACTION)
        .by("GitHub Actions", "https://docs.github.com/actions/sharing-automations/creating-actions/metadata-syntax-for-github-actions"),
    entry(".gitlab-ci.yml", Anywhere, &[".gitlab-ci.yml"], false, RunsCode, CI)
        .by("GitLab CI/CD", "https://docs.gitlab.com/ci/yaml/"),
    dir(".gitlab/ci/", &[".gitlab", "ci"], CI).by("GitLab CI/CD (include: local)", "https://docs.gitlab.com/ci/yaml/includes/"),
    dir(".gitea/workflows/", &[".gitea", "workflows"], CI).by("Gitea Actions", "https://docs.gitea.com/usage/actions/overview"),
    dir(".gitea/actions/", &[".gitea", "actions"], CI).by("Gitea Actions", "https://docs.gitea.com/usage/actions/overview"),
    dir(".forgejo/", &[".forgejo"], CI).by("Forgejo Actions", "https://forgejo.org/docs/latest/user/actions/"),
    file(".woodpecker.yml", &[".woodpecker.yml"], CI).by("Woodpecker CI", WOODPECKER),
    file(".woodpecker.yaml", &[".woodpecker.yaml"], CI).by("Woodpecker CI", WOODPECKER),
    dir(".woodpecker/", &[".woodpecker"], CI).by("Woodpecker CI", WOODPECKER),
    entry(".circleci/", Anywhere, &[".circleci"], true, RunsCode, CI)
        .by("CircleCI", "https://circleci.com/docs/configuration-reference/"),
    entry(".buildkite/", Anywhere, &[".buildkite"], true, RunsCode, CI)
        .by("Buildkite", "https://buildkite.com/docs/pipelines/configure/defining-steps"),
    entry("azure-pipelines.yml", Anywhere, &["azure-pipelines.yml"], false, RunsCode, CI).by("Azure Pipelines", AZURE),
    file("azure-pipelines.yaml", &["azure-pipelines.yaml"], CI).by("Azure Pipelines", AZURE),
    dir(".azure-pipelines/", &[".azure-pipelines"], CI).by("Azure Pipelines", AZURE),
    entry(".travis.yml", Anywhere, &[".travis.yml"], false, RunsCode, CI)
        .by("Travis CI", "https://docs.travis-ci.com/user/customizing-the-build/"),
    entry("bitbucket-pipelines.yml", Anywhere, &["bitbucket-pipelines.yml"], false, RunsCode, CI)
        .by("Bitbucket Pipelines", "https://support.atlassian.com/bitbucket-cloud/docs/bitbucket-pipelines-configuration-reference/"),
    entry("Jenkinsfile", Anywhere, &["jenkinsfile"], false, RunsCode, CI)
        .by("Jenkins", "https://www.jenkins.io/doc/book/pipeline/jenkinsfile/"),
    entry(".drone.yml", Anywhere, &[".drone.yml"], false, RunsCode, CI)
        .by("Drone", "https://docs.drone.io/pipeline/overview/"),
    file("cloudbuild.yaml", &["cloudbuild.yaml"], CI).by("Google Cloud Build", CLOUD_BUILD),
    file("cloudbuild.yml", &["cloudbuild.yml"], CI).by("Google Cloud Build", CLOUD_BUILD),
    file("cloudbuild.json", &["cloudbuild.json"], CI).by("Google Cloud Build", CLOUD_BUILD),
    file("appveyor.yml", &["appveyor.yml"], CI).by("AppVeyor", APPVEYOR),
    file(".appveyor.yml", &[".appveyor.yml"], CI).by("AppVeyor", APPVEYOR),
    file(".cirrus.yml", &[".cirrus.yml"], CI).by("Cirrus CI", CIRRUS),
    file(".cirrus.star", &[".cirrus.star"], CI).by("Cirrus CI", CIRRUS),
    file("bitrise.yml", &["bitrise.yml"], CI).by("Bitrise", "https://devcenter.bitrise.io/en/builds/configuration-yaml.html"),
    file("codemagic.yaml", &["codemagic.yaml"], CI).by("Codemagic", "https://docs.codemagic.io/yaml-basic-configuration/yaml-getting-started/"),
    file("buildspec.yml", &["buildspec.yml"], CI).by("AWS CodeBuild", "https://docs.aws.amazon.com/codebuild/latest/userguide/build-spec-ref.html"),
    dir(".semaphore/", &[".semaphore"], CI).by("Semaphore", "https://docs.semaphoreci.com/reference/pipeline-yaml"),
    dir(".tekton/", &[".tekton"], CI).by("Tekton Pipelines as Code", "https://pipelinesascode.com/docs/guide/authoringprs/"),
    file(".build.yml", &[".build.yml"], CI).by("SourceHut builds", SOURCEHUT),
    dir(".builds/", &[".builds"], CI).by("SourceHut builds", SOURCEHUT),
    // hosting services that build on push
    file("netlify.toml", &["netlify.toml"], DEPLOY).by("Netlify", "https://docs.netlify.com/configure-builds/file-based-configuration/"),
    file("vercel.json", &["vercel.json"], DEPLOY).by("Vercel", "https://vercel.com/docs/project-configuration"),
    file("Procfile", &["procfile"], DEPLOY).by("Heroku", "https://devcenter.heroku.com/articles/procfile"),
    file("render.yaml", &["render.yaml"], DEPLOY).by("Render", "https://render.com/docs/blueprint-spec"),
    file("amplify.yml", &["amplify.yml"], DEPLOY).by("AWS Amplify", "https://docs.aws.amazon.com/amplify/latest/userguide/build-settings.html"),
    file(".platform.app.yaml", &[".platform.app.yaml"], DEPLOY).by("Platform.sh (hooks)", "https://docs.platform.sh/create-apps/hooks.html"),
    file("railway.json", &["railway.json"], DEPLOY).by("Railway", RAILWAY),
    file("railway.toml", &["railway.toml"], DEPLOY).by("Railway", RAILWAY),
    file("nixpacks.toml", &["nixpacks.toml"], DEPLOY).by("Nixpacks", "https://nixpacks.com/docs/configuration/file"),
    // per-user schedulers and services
    entry("~/.config/systemd/user/", Home, &[".config", "systemd", "user"], true, RunsCode, SCHEDULER)
        .by("systemd --user", SYSTEMD_USER),
    entry("~/.config/autostart/", Home, &[".config", "autostart"], true, RunsCode, "a desktop autostart file: the session runs it at login")
        .by("the desktop session", "https://specifications.freedesktop.org/autostart-spec/latest/"),
    entry("/var/spool/cron/", Root, &["var", "spool", "cron"], true, RunsCode, "a crontab: cron runs it on schedule")
        .by("cron", CRON),
    entry("/etc/cron.d/", Root, &["etc", "cron.d"], true, RunsCode, "a system crontab: cron runs it on schedule")
        .by("cron", CRON),
    entry("/etc/crontab", Root, &["etc", "crontab"], false, RunsCode, "the system crontab: cron runs it on schedule")
        .by("cron", CRON),
];

/// Why one path is protected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protected {
    /// The entry that matched, as people write it (`.git/`, `~/.bashrc`, or
    /// the path of one of toolgate's own files).
    pub entry: String,
    /// What a write there would do.
    pub class: ProtectedClass,
    /// Why, in words a person reads.
    pub why: String,
    /// The path component that names the place (`.git`, `.bashrc`,
    /// `toolgate`): a rule names a protected path when one of its pattern's
    /// components is this name.
    pub name: String,
}

/// The protected paths of one machine: the table plus toolgate's own files.
#[derive(Clone, Debug)]
pub struct ProtectedPaths {
    home: PathBuf,
    /// Toolgate's own places as given.
    own_given: Vec<PathBuf>,
    /// The same, symlinks resolved, computed on first use: most decisions
    /// judge no write, and resolving costs a `readlink` per path component.
    own: OnceLock<Vec<PathBuf>>,
    /// The location roots whose protected names are followed (see
    /// [`ProtectedPaths::with_roots`]).
    roots: Vec<PathBuf>,
    /// Where the protected names of the roots and of the home directory
    /// really are when they are symbolic links (or `.git` is a gitfile),
    /// computed on first use like `own`.
    aliases: OnceLock<Vec<Alias>>,
    /// The home directory with symlinks resolved (paths are judged in
    /// their canonical form), computed on first use like `own`.
    home_real: OnceLock<PathBuf>,
    /// The regular files of the protected places by device and inode, for
    /// a write to a hard link of one; computed the first time a written
    /// file has more than one link.
    links: OnceLock<HashMap<(u64, u64), Protected>>,
}

/// A protected place reached under another name: the entry's name is a
/// symbolic link (`.envrc -> tools/envrc`, `~/.bashrc -> dotfiles/bashrc`)
/// or a gitfile (`.git` holding `gitdir: .bare`), and `target` is where the
/// program that reads the entry really reads.
#[derive(Clone, Debug)]
struct Alias {
    target: PathBuf,
    entry: &'static ProtectedEntry,
}

impl ProtectedPaths {
    /// The table for `home`, plus `own`: toolgate's config files and data
    /// directory wherever this machine keeps them (each covers itself and
    /// everything beneath). Relative paths are dropped; an existing path is
    /// judged by its canonical form (resolved the first time it is needed),
    /// one that does not exist by the path given.
    pub fn new(home: impl Into<PathBuf>, own: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut own_given: Vec<PathBuf> = Vec::new();
        for p in own.into_iter().filter(|p| p.is_absolute()) {
            if !own_given.contains(&p) {
                own_given.push(p);
            }
        }
        ProtectedPaths {
            home: home.into(),
            own_given,
            own: OnceLock::new(),
            roots: Vec::new(),
            aliases: OnceLock::new(),
            home_real: OnceLock::new(),
            links: OnceLock::new(),
        }
    }

    /// Also protects the real places behind the protected names of `roots`
    /// (absolute, canonical location roots) and of the home directory: a
    /// `.toolgate`, `.envrc`, `.claude`, `.github` … that is a symbolic link
    /// into the location makes its target the place the program reads, and
    /// a write to the target is a write to the protected place; a `.git`
    /// gitfile makes the directory it names the repository. They are read
    /// the first time a write is judged.
    pub fn with_roots(mut self, roots: impl IntoIterator<Item = PathBuf>) -> Self {
        for r in roots.into_iter().filter(|r| r.is_absolute()) {
            if !self.roots.contains(&r) {
                self.roots.push(r);
            }
        }
        self
    }

    /// The protected places reached under another name (see [`Alias`]).
    fn aliases(&self) -> &[Alias] {
        self.aliases.get_or_init(|| {
            let mut out: Vec<Alias> = Vec::new();
            let mut add = |target: PathBuf, entry: &'static ProtectedEntry| {
                if !out.iter().any(|a| a.target == target) {
                    out.push(Alias { target, entry });
                }
            };
            for entry in PROTECTED.iter().filter(|e| e.anchor == Home) {
                if !self.home.is_absolute() {
                    break;
                }
                let lexical = entry.names.iter().fold(self.home.clone(), |p, n| p.join(n));
                if let Ok(real) = std::fs::canonicalize(&lexical) {
                    if real != lexical {
                        add(real, entry);
                    }
                }
            }
            let mut budget = ALIAS_SCAN_LIMIT;
            for root in &self.roots {
                walk_for_aliases(root, &mut budget, &mut add);
            }
            out
        })
    }

    /// The regular files of every protected place of the roots, the home
    /// directory and toolgate's own places (a directory's files two levels
    /// deep, git's object store and logs aside), by device and inode.
    fn links(&self) -> &HashMap<(u64, u64), Protected> {
        self.links.get_or_init(|| {
            let mut out = HashMap::new();
            let mut budget = LINK_SCAN_LIMIT;
            let mut places: Vec<(PathBuf, Protected)> = Vec::new();
            for entry in PROTECTED {
                let bases: Vec<PathBuf> = match entry.anchor {
                    Anywhere => self.roots.clone(),
                    Home if self.home.is_absolute() => vec![self.home.clone()],
                    Home => Vec::new(),
                    Root => vec![PathBuf::from("/")],
                };
                for base in bases {
                    let at = entry.names.iter().fold(base, |p, n| p.join(n));
                    places.push((at, protected_of(entry)));
                }
            }
            for alias in self.aliases() {
                places.push((alias.target.clone(), protected_of(alias.entry)));
            }
            for own in self.own() {
                places.push((
                    own.clone(),
                    Protected {
                        entry: own.display().to_string(),
                        class: Toolgate,
                        why: OWN_WHY.into(),
                        name: own
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                    },
                ));
            }
            for (at, hit) in places {
                collect_files(&at, &hit, 2, &mut budget, &mut out);
            }
            out
        })
    }

    /// A hard link to a protected file: the written file has more than one
    /// link, and one of them is a protected file.
    fn hard_link(&self, path: &Path) -> Option<Protected> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        if !meta.is_file() || meta.nlink() < 2 {
            return None;
        }
        let hit = self.links().get(&(meta.dev(), meta.ino()))?;
        Some(Protected {
            why: format!(
                "{} ({} is a hard link to the protected file)",
                hit.why,
                path.display()
            ),
            ..hit.clone()
        })
    }

    /// Toolgate's own places added to the table (canonical where they exist).
    pub fn own(&self) -> &[PathBuf] {
        self.own.get_or_init(|| {
            let mut resolved: Vec<PathBuf> = Vec::with_capacity(self.own_given.len());
            for p in &self.own_given {
                let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                if !resolved.contains(&p) {
                    resolved.push(p);
                }
            }
            resolved
        })
    }

    /// Whether `path` (absolute, as judged) is protected, and why. A relative
    /// path is never protected by a home or root entry, only by an entry
    /// anchored anywhere.
    pub fn check(&self, path: &Path) -> Option<Protected> {
        self.check_by_name(path)
            .or_else(|| self.hard_link(path))
            .or_else(|| self.dot_path(path))
    }

    /// [`ProtectedPaths::check`] without looking for a hard link to a
    /// protected file (one `lstat` per path): for a cheap first sort of many
    /// paths (which changes deserve a diff), never enough to allow a write.
    pub fn check_without_links(&self, path: &Path) -> Option<Protected> {
        self.check_by_name(path).or_else(|| self.dot_path(path))
    }

    /// The table's entries and toolgate's own places, by the path's names.
    fn check_by_name(&self, path: &Path) -> Option<Protected> {
        for own in self.own() {
            if path.starts_with(own) {
                let name = own
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Some(Protected {
                    entry: own.display().to_string(),
                    class: Toolgate,
                    why: OWN_WHY.into(),
                    name,
                });
            }
        }
        for alias in self.aliases() {
            let e = alias.entry;
            let Ok(rest) = path.strip_prefix(&alias.target) else {
                continue;
            };
            let rest = lowercase_names(rest);
            if (e.beneath || rest.is_empty()) && e.covers(&rest) {
                return Some(Protected {
                    entry: e.display.to_string(),
                    class: e.class,
                    why: format!("{} (reached here through {})", e.why, e.display),
                    name: e.names.last().copied().unwrap_or_default().to_string(),
                });
            }
        }
        let names = lowercase_names(path);
        // The home directory as given or as it really is: a judged path is
        // canonical, and `$HOME` may be reached through a symbolic link.
        let home_real = self.home_real.get_or_init(|| {
            std::fs::canonicalize(&self.home).unwrap_or_else(|_| self.home.clone())
        });
        let home_len = [&self.home, home_real]
            .into_iter()
            .find(|h| path.is_absolute() && h.is_absolute() && path.starts_with(h))
            .map(|h| normal_len(h));
        // The first entry of the table (in its order) that matches at any
        // position; only the entries whose first name is the name there
        // can, so each position looks up a handful instead of the table.
        let mut first: Option<usize> = None;
        for (at, name) in names.iter().enumerate() {
            let Some(candidates) = by_first_name().get(name.as_str()) else {
                continue;
            };
            for &i in candidates {
                if first.is_some_and(|f| f <= i) {
                    break;
                }
                let e = &PROTECTED[i];
                let anchored = match e.anchor {
                    Anywhere => true,
                    Home => home_len == Some(at),
                    Root => path.is_absolute() && at == 0,
                };
                if anchored && matches_at(e, &names, at) {
                    first = Some(i);
                    break;
                }
            }
        }
        first
            .map(|i| protected_of(&PROTECTED[i]))
            .or_else(|| protected_suffix(path))
    }

    /// The shape rule: a path inside a location root with a component
    /// that starts with a dot (beneath the root) is protected, unless it is
    /// git's own directory (which the table judges), an inert dotfile
    /// ([`crate::shape::INERT_DOTFILES`]), or ignored by git's ignore rules
    /// as they are now, before the write ([`crate::shape::is_ignored`]); a
    /// path that ends in `/` is a directory.
    fn dot_path(&self, path: &Path) -> Option<Protected> {
        let root = self.roots.iter().find(|r| path.starts_with(r))?;
        let rest = path.strip_prefix(root).ok()?;
        let first_dot = crate::shape::first_dot_component(rest)?;
        // A path named with a trailing `/` is a directory being made.
        let named_dir = path.as_os_str().as_encoded_bytes().ends_with(b"/");
        if crate::shape::is_ignored(root, rest, named_dir) {
            return None;
        }
        Some(Protected {
            entry: format!("{first_dot} (a dot-path in the location)"),
            class: RunsCode,
            why: crate::shape::DOT_PATH_WHY.to_string(),
            name: first_dot,
        })
    }
}

/// File name endings that make a file a program's configuration that runs
/// code, wherever it is and whatever its name before the ending:
/// `(ending, program, where documented)`. Compared in lower case.
pub const PROTECTED_SUFFIXES: &[(&str, &str, &str)] = &[(
    ".code-workspace",
    "VS Code: a workspace file holds settings, tasks (`runOn: folderOpen` runs when it is opened) and launch configurations, like `.vscode/`",
    "https://code.visualstudio.com/docs/editing/workspaces/multi-root-workspaces",
)];

/// File names with a variable part between a fixed start and end that make
/// a file a program's configuration that runs code: `(start, end, program,
/// where documented)`. Compared in lower case.
pub const PROTECTED_NAME_FORMS: &[(&str, &str, &str, &str)] = &[(
    "mise.",
    ".toml",
    "mise: `mise.{MISE_ENV}.toml` (`mise.dev.toml`, `mise.production.toml`) is loaded on entering the directory like `mise.toml` when MISE_ENV names it: its hooks and tasks run then",
    "https://mise.jdx.dev/configuration/environments.html",
)];

/// The entry of [`PROTECTED_SUFFIXES`] whose ending `path`'s name has, or
/// of [`PROTECTED_NAME_FORMS`] whose form it has.
fn protected_suffix(path: &Path) -> Option<Protected> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    if let Some((start, end, program, _)) =
        PROTECTED_NAME_FORMS.iter().find(|(start, end, _, _)| {
            name.len() > start.len() + end.len() && name.starts_with(start) && name.ends_with(end)
        })
    {
        return Some(Protected {
            entry: format!("{start}*{end}"),
            class: RunsCode,
            why: (*program).to_string(),
            name,
        });
    }
    let (ending, program, _) = PROTECTED_SUFFIXES
        .iter()
        .find(|(ending, _, _)| name.len() > ending.len() && name.ends_with(ending))?;
    Some(Protected {
        entry: format!("*{ending}"),
        class: RunsCode,
        why: (*program).to_string(),
        name,
    })
}

const OWN_WHY: &str = "one of toolgate's own config files or its data directory: a write there changes the gate itself";

/// At most this many entries are read to find the protected files' inodes.
const LINK_SCAN_LIMIT: usize = 20_000;

/// Directories of a protected place not looked into for hard links: git's
/// object store, logs and nested repositories hold many files and nothing
/// a program runs.
const LINK_SCAN_SKIP: &[&str] = &["objects", "logs", "lfs", "modules", "worktrees"];

/// Why `e` protects a path.
fn protected_of(e: &ProtectedEntry) -> Protected {
    Protected {
        entry: e.display.to_string(),
        class: e.class,
        why: e.why.to_string(),
        name: e.names.last().copied().unwrap_or_default().to_string(),
    }
}

/// Records the regular files at `at` (itself, or beneath it `depth` levels
/// deep) as `hit`, by device and inode.
fn collect_files(
    at: &Path,
    hit: &Protected,
    depth: usize,
    budget: &mut usize,
    out: &mut HashMap<(u64, u64), Protected>,
) {
    let Ok(meta) = std::fs::symlink_metadata(at) else {
        return;
    };
    if meta.is_file() {
        out.entry((meta.dev(), meta.ino()))
            .or_insert_with(|| hit.clone());
        return;
    }
    if !meta.is_dir() || depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(at) else {
        return;
    };
    for entry in entries.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let name = entry.file_name();
        if LINK_SCAN_SKIP
            .iter()
            .any(|s| name.as_encoded_bytes() == s.as_bytes())
        {
            continue;
        }
        collect_files(&entry.path(), hit, depth - 1, budget, out);
    }
}

/// At most this many entries of the location are read to find protected
/// names that are links.
const ALIAS_SCAN_LIMIT: usize = 50_000;
/// How deep below a root protected names that are links are looked for.
const ALIAS_SCAN_DEPTH: usize = 8;
/// Directories not looked into for them: git's internals, dependencies and
/// build output, which hold many files and no project's own settings.
const ALIAS_SCAN_SKIP: &[&str] = &[".git", "node_modules", "target", ".venv", "__pycache__"];

/// Walks `root` (without following links) for entries named like the first
/// component of an entry anchored anywhere (`.envrc`, `.toolgate`,
/// `.github`, `.git`…) and reports, through `add`, where the entry really
/// is when a link (or a `.git` gitfile) takes it elsewhere: a write there
/// is a write to the protected place.
fn walk_for_aliases(
    root: &Path,
    budget: &mut usize,
    add: &mut impl FnMut(PathBuf, &'static ProtectedEntry),
) {
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            let name = e.file_name();
            let lower = name.to_string_lossy().to_ascii_lowercase();
            for entry in PROTECTED
                .iter()
                .filter(|p| p.anchor == Anywhere && p.names.first() == Some(&lower.as_str()))
            {
                let lexical = entry.names[1..]
                    .iter()
                    .fold(dir.join(&name), |p, n| p.join(n));
                let Ok(real) = std::fs::canonicalize(&lexical) else {
                    continue;
                };
                if real != lexical {
                    add(real.clone(), entry);
                }
                if names_what_runs_here(entry) {
                    for named in crate::named_by::named_paths(&real, &dir, root) {
                        add(named, &NAMED_BY_PROTECTED);
                    }
                }
                if entry.names == [".git"] && real.is_file() {
                    if let Some(target) = gitfile_target(&real) {
                        add(target, entry);
                    }
                }
                if entry.names == [".git"] {
                    let git_dir = if real.is_file() {
                        gitfile_target(&real)
                    } else {
                        Some(real.clone())
                    };
                    // The hooks the person installed run what they name.
                    for named in git_dir
                        .iter()
                        .flat_map(|g| crate::named_by::named_paths(&g.join("hooks"), &dir, root))
                    {
                        add(named, &NAMED_BY_PROTECTED);
                    }
                    for named in git_dir
                        .iter()
                        .flat_map(|g| crate::git_config_paths::named_paths(g, &dir))
                    {
                        let named = std::fs::canonicalize(&named).unwrap_or(named);
                        add(named, &GIT_CONFIG_NAMED);
                    }
                }
            }
            let descend = depth < ALIAS_SCAN_DEPTH
                && !ALIAS_SCAN_SKIP.contains(&lower.as_str())
                && e.file_type().is_ok_and(|t| t.is_dir());
            if descend {
                stack.push((e.path(), depth + 1));
            }
        }
    }
}

/// What a repository's git configuration names (an included file, the
/// hooks directory, a driver's script): git reads or runs it as it does
/// `.git/config` (see [`crate::git_config_paths`]).
static GIT_CONFIG_NAMED: ProtectedEntry = entry(
    ".git/config",
    Anywhere,
    &[".git"],
    true,
    RunsCode,
    "named by the repository's git config (an include, core.hooksPath, a driver's command): git reads or runs it like .git/config",
);

/// A file that a protected file running code on this machine names (a
/// script `.envrc` sources, a directory it puts on `PATH`, a hook's or an
/// MCP server's script, an editor's interpreter): it runs as the protected
/// file does (see [`crate::named_by`]).
static NAMED_BY_PROTECTED: ProtectedEntry = entry(
    "a file a protected file names",
    Anywhere,
    &[],
    true,
    RunsCode,
    "named by a protected file that runs code on this machine (direnv's .envrc, a git hook or hook manager, another agent's hook or MCP server, an editor's settings): it runs as that file does",
);

/// Whether the files `e` protects run code on this machine on their own,
/// so that what they name runs too: not CI and hosting files (they run
/// after a push, which is asked), not git's directory (its hooks are read
/// apart) or its ignore file, not toolgate's own config, not direnv's state.
fn names_what_runs_here(e: &ProtectedEntry) -> bool {
    e.anchor == Anywhere
        && e.class == RunsCode
        && ![CI, DEPLOY, CI_ACTION].contains(&e.why)
        && ![&[".git"][..], &[".gitignore"], &[".direnv"]].contains(&e.names)
}

/// The directory a `.git` gitfile (`gitdir: PATH`) names, canonical, when
/// it exists.
fn gitfile_target(file: &Path) -> Option<PathBuf> {
    let text = crate::small_file::read_text(file, 4096).ok()?;
    let named = text.strip_prefix("gitdir:")?.trim();
    let dir = file.parent()?.join(named);
    std::fs::canonicalize(dir).ok().filter(|d| d.is_dir())
}

/// The number of normal components of `path`.
fn normal_len(path: &Path) -> usize {
    path.components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count()
}

/// Whether `e`'s names start at component `at` of `names` and the entry
/// covers what follows.
fn matches_at(e: &ProtectedEntry, names: &[String], at: usize) -> bool {
    let end = at + e.names.len();
    if end > names.len() {
        return false;
    }
    let same = names[at..end]
        .iter()
        .zip(e.names)
        .all(|(have, want)| have == want);
    same && (e.beneath || end == names.len()) && e.covers(&names[end..])
}

/// The table's entries by their first name, each list in table order.
fn by_first_name() -> &'static HashMap<&'static str, Vec<usize>> {
    static INDEX: OnceLock<HashMap<&'static str, Vec<usize>>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index: HashMap<&'static str, Vec<usize>> = HashMap::new();
        for (i, e) in PROTECTED.iter().enumerate() {
            if let Some(name) = e.names.first() {
                index.entry(name).or_default().push(i);
            }
        }
        index
    })
}

/// The normal components of `path`, lowercase (ASCII).
fn lowercase_names(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> ProtectedPaths {
        ProtectedPaths::new(
            "/home/u",
            [
                PathBuf::from("/srv/tg-data"),
                PathBuf::from("/opt/cfg/session.toml"),
            ],
        )
    }

    /// A path (as judged, absolute) for each entry of the table, and the
    /// entry it must hit; a test per entry, so none is dead.
    #[test]
    fn every_entry_protects_its_place() {
        let cases: &[(&str, &str)] = &[
            ("/ws/.toolgate/config.toml", ".toolgate/"),
            (
                "/home/u/.config/toolgate/config.toml",
                "~/.config/toolgate/",
            ),
            (
                "/home/u/.local/share/toolgate/trusted-projects.json",
                "~/.local/share/toolgate/",
            ),
            ("/etc/toolgate/config.toml", "/etc/toolgate/"),
            ("/ws/.git/config", ".git/"),
            ("/ws/.envrc", ".envrc"),
            ("/ws/.direnv/python-3/bin/activate", ".direnv/"),
            ("/home/u/.bashrc", "~/.bashrc"),
            ("/home/u/.bash_profile", "~/.bash_profile"),
            ("/home/u/.bash_login", "~/.bash_login"),
            ("/home/u/.bash_logout", "~/.bash_logout"),
            ("/home/u/.profile", "~/.profile"),
            ("/home/u/.zshrc", "~/.zshrc"),
            ("/home/u/.zshenv", "~/.zshenv"),
            ("/home/u/.zprofile", "~/.zprofile"),
            ("/home/u/.zlogin", "~/.zlogin"),
            ("/home/u/.config/fish/config.fish", "~/.config/fish/"),
            ("/home/u/.gitconfig", "~/.gitconfig"),
            ("/home/u/.config/git/config", "~/.config/git/"),
            ("/home/u/.ssh/config", "~/.ssh/config"),
            ("/ws/.claude/settings.json", ".claude/"),
            ("/ws/.codex/config.toml", ".codex/"),
            ("/ws/.gemini/settings.json", ".gemini/"),
            ("/ws/.cursor/rules/x.mdc", ".cursor/"),
            ("/ws/.mcp.json", ".mcp.json"),
            ("/ws/.vscode/settings.json", ".vscode/settings.json"),
            ("/ws/.vscode/tasks.json", ".vscode/tasks.json"),
            ("/ws/.github/workflows/ci.yml", ".github/workflows/"),
            ("/ws/.gitlab-ci.yml", ".gitlab-ci.yml"),
            ("/ws/.github/actions/build/action.yml", ".github/actions/"),
            ("/ws/.circleci/config.yml", ".circleci/"),
            ("/ws/.buildkite/pipeline.yml", ".buildkite/"),
            ("/ws/azure-pipelines.yml", "azure-pipelines.yml"),
            ("/ws/.travis.yml", ".travis.yml"),
            ("/ws/bitbucket-pipelines.yml", "bitbucket-pipelines.yml"),
            ("/ws/Jenkinsfile", "Jenkinsfile"),
            ("/ws/.drone.yml", ".drone.yml"),
            ("/ws/.husky/pre-commit", ".husky/"),
            ("/ws/.pre-commit-config.yaml", ".pre-commit-config.yaml"),
            (
                "/home/u/.config/systemd/user/x.service",
                "~/.config/systemd/user/",
            ),
            (
                "/home/u/.config/autostart/x.desktop",
                "~/.config/autostart/",
            ),
            ("/var/spool/cron/crontabs/u", "/var/spool/cron/"),
            ("/etc/cron.d/x", "/etc/cron.d/"),
            ("/etc/crontab", "/etc/crontab"),
        ];
        let p = paths();
        for (path, want) in cases {
            let hit = p.check(Path::new(path));
            assert_eq!(
                hit.as_ref().map(|h| h.entry.as_str()),
                Some(*want),
                "{path}"
            );
            let hit = hit.unwrap();
            assert!(!hit.why.is_empty());
            assert!(!hit.name.is_empty());
        }
    }

    /// Every entry, the new ones included, protects its own place (no
    /// earlier entry shadows it) and says which program loads it and where
    /// that is documented.
    #[test]
    fn every_entry_names_its_program_and_source_and_hits_its_place() {
        let p = paths();
        for e in PROTECTED {
            assert!(!e.program.is_empty(), "{} names no program", e.display);
            assert!(!e.source.is_empty(), "{} names no source", e.display);
            assert!(!e.why.is_empty(), "{} says no why", e.display);
            let base = match e.anchor {
                Anywhere => PathBuf::from("/ws/sub"),
                Home => PathBuf::from("/home/u"),
                Root => PathBuf::from("/"),
            };
            let mut at = e.names.iter().fold(base, |b, n| b.join(n));
            if e.beneath {
                at.push("some-file");
            }
            let hit = p.check(&at);
            assert_eq!(
                hit.map(|h| h.entry),
                Some(e.display.to_string()),
                "{}",
                at.display()
            );
        }
        let mut seen = std::collections::HashSet::new();
        for e in PROTECTED {
            assert!(
                seen.insert((e.anchor as u8, e.names)),
                "{} twice",
                e.display
            );
        }
        assert!(PROTECTED.len() >= 150, "{} entries", PROTECTED.len());
        // The lookup by first name finds an entry only by its names.
        for e in PROTECTED {
            assert!(!e.names.is_empty(), "{} has no names", e.display);
            assert!(
                e.names.iter().all(|n| *n == n.to_ascii_lowercase()),
                "{} has an upper-case name",
                e.display
            );
        }
    }

    #[test]
    fn git_data_is_written_but_what_git_runs_or_obeys_is_protected() {
        let p = paths();
        for data in [
            "/ws/.git/objects/ab/cdef0123",
            "/ws/.git/objects/pack/pack-1.pack",
            "/ws/.git/refs/heads/main",
            "/ws/.git/logs/HEAD",
            "/ws/.git/index",
            "/ws/.git/HEAD",
            "/ws/.git/ORIG_HEAD",
            "/ws/.git/FETCH_HEAD",
            "/ws/.git/packed-refs",
            "/ws/.git/COMMIT_EDITMSG",
            "/ws/vendor/lib/.git/refs/tags/v1",
        ] {
            assert_eq!(p.check(Path::new(data)), None, "{data}");
        }
        for runs in [
            "/ws/.git",
            "/ws/.git/config",
            "/ws/.git/hooks/pre-commit",
            "/ws/.git/hooks",
            "/ws/.git/info/exclude",
            "/ws/.git/info/attributes",
            "/ws/.git/objects/info/alternates",
            "/ws/.git/objects/info/http-alternates",
            "/ws/.git/commondir",
            "/ws/.git/modules/sub/config",
            "/ws/.git/modules/sub/hooks/post-checkout",
            "/ws/.git/modules/sub/objects/ab/cd",
            "/ws/.git/worktrees/feature/gitdir",
            "/ws/.git/worktrees/feature/HEAD",
            "/ws/.git/worktrees/feature/commondir",
            "/ws/.git/worktrees/feature/config.worktree",
            "/ws/.git/rebase-merge/git-rebase-todo",
            "/ws/.git/sequencer/todo",
            "/ws/.git/config.worktree",
            "/ws/.GIT/Hooks/post-merge",
        ] {
            assert!(p.check(Path::new(runs)).is_some(), "{runs}");
        }
    }

    #[test]
    fn directories_cover_themselves_and_what_is_beneath() {
        let p = paths();
        for path in [
            "/ws/.git",
            "/ws/.git/hooks/pre-commit",
            "/ws/vendor/lib/.git/config",
            "/ws/.github/workflows",
            "/home/u/.config/fish",
        ] {
            assert!(p.check(Path::new(path)).is_some(), "{path}");
        }
    }

    #[test]
    fn names_are_compared_case_insensitively() {
        let p = paths();
        for path in [
            "/ws/.GIT/config",
            "/ws/.EnvRC",
            "/home/u/.BASHRC",
            "/ws/.GitHub/Workflows/x.yml",
        ] {
            assert!(p.check(Path::new(path)).is_some(), "{path}");
        }
    }

    #[test]
    fn toolgate_own_places_are_added() {
        let p = paths();
        let hit = p.check(Path::new("/srv/tg-data/state.db")).unwrap();
        assert_eq!((hit.class, hit.name.as_str()), (Toolgate, "tg-data"));
        assert!(p.check(Path::new("/opt/cfg/session.toml")).is_some());
        assert!(p.check(Path::new("/opt/cfg/other.toml")).is_none());
        assert_eq!(
            p.check(Path::new("/ws/.toolgate/config.toml"))
                .unwrap()
                .class,
            Toolgate
        );
    }

    #[test]
    fn benign_look_alikes_are_not_protected() {
        let p = paths();
        for path in [
            "/ws/src/lib.rs",
            "/ws/.gitattributes",
            "/ws/.github/README.md",
            "/ws/.github/dependabot.yml",
            "/ws/docs/git/config",
            "/ws/.bashrc",
            "/ws/profile",
            "/ws/.envrc.example",
            "/ws/.vscode/extensions.json",
            "/ws/mcp.json",
            "/ws/workflows/ci.yml",
            "/home/u/.bashrc.bak",
            "/home/u/project/.profile",
            "/home/u/.config/nvim/init.lua",
            "/home/u/.ssh/known_hosts",
            "/ws/etc/crontab",
            "/tmp/cron.d/x",
        ] {
            assert_eq!(p.check(Path::new(path)), None, "{path}");
        }
    }

    #[test]
    fn relative_paths_only_meet_entries_anchored_anywhere() {
        let p = paths();
        assert!(p.check(Path::new(".git/config")).is_some());
        assert!(p.check(Path::new("a/.envrc")).is_some());
        assert!(p.check(Path::new(".bashrc")).is_none());
        assert!(p.check(Path::new("etc/crontab")).is_none());
    }
}

#[cfg(test)]
mod shape_tests {
    use super::*;

    /// A git work tree with the usual ignore rules of a project.
    fn location() -> (tempfile::TempDir, PathBuf, ProtectedPaths) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        std::fs::write(
            root.join(".gitignore"),
            "node_modules/\ntarget/\n.venv\n.pytest_cache/\n__pycache__/\n.mypy_cache/\n.idea/\n.vscode/\n",
        )
        .unwrap();
        let p = ProtectedPaths::new("/home/u", []).with_roots([root.clone()]);
        (dir, root, p)
    }

    #[test]
    fn a_write_to_an_unlisted_dot_path_of_the_location_is_protected() {
        let (_d, root, p) = location();
        for rel in [
            ".eslintrc.js",
            ".babelrc",
            ".mocharc.yml",
            ".nycrc",
            ".swcrc",
            ".npmrc-other",
            ".hgrc",
            ".gitattributes",
            ".gitmodules",
            ".tool-versions",
            ".python-version",
            ".config/whatever.toml",
            ".github/dependabot.yml",
            ".github/ISSUE_TEMPLATE/bug.md",
            "pkg/.hidden/run.sh",
            "deep/er/.something",
            ".Trae/rules.md",
        ] {
            let hit = p.check(&root.join(rel));
            assert!(hit.is_some(), "{rel}");
        }
    }

    #[test]
    fn gitignore_and_exclude_are_protected_as_they_decide_what_is_spared() {
        let (_d, root, p) = location();
        for rel in [".gitignore", "sub/.gitignore", ".git/info/exclude"] {
            assert!(p.check(&root.join(rel)).is_some(), "{rel}");
        }
    }

    #[test]
    fn ignored_build_output_and_inert_dotfiles_are_not_protected() {
        let (_d, root, p) = location();
        for rel in [
            "node_modules/.bin/eslint",
            "node_modules/.package-lock.json",
            "node_modules/pkg/.eslintrc.json",
            "target/debug/.fingerprint/demo-1/lib",
            "target/.rustc_info.json",
            ".venv/bin/python",
            ".venv/pyvenv.cfg",
            ".pytest_cache/v/cache/lastfailed",
            "pkg/__pycache__/x.pyc",
            ".mypy_cache/3.12/x.json",
            ".editorconfig",
            "web/.prettierignore",
            ".dockerignore",
            "src/.gitkeep",
            "src/main.rs",
            "Makefile",
        ] {
            assert_eq!(p.check(&root.join(rel)), None, "{rel}");
        }
    }

    #[test]
    fn a_directory_not_there_before_is_judged_as_a_directory_when_named_so() {
        // `.pytest_cache/` ignores a directory: the staged change that
        // creates it is named with a trailing slash; a file of that name
        // is not ignored.
        let (_d, root, p) = location();
        let mut dir = root.join(".pytest_cache").into_os_string();
        dir.push("/");
        assert_eq!(p.check(Path::new(&dir)), None);
        assert!(p.check(&root.join(".pytest_cache")).is_some());
    }

    #[test]
    fn the_table_wins_over_the_ignore_rules() {
        // `.idea/` and `.vscode/` are ignored by this project, but the
        // editors load them all the same.
        let (_d, root, p) = location();
        for rel in [
            ".idea/workspace.xml",
            ".vscode/mcp.json",
            ".vscode/tasks.json",
        ] {
            assert!(p.check(&root.join(rel)).is_some(), "{rel}");
        }
    }

    #[test]
    fn dots_above_the_root_do_not_count() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap().join(".work/ws");
        std::fs::create_dir_all(&root).unwrap();
        let p = ProtectedPaths::new("/home/u", []).with_roots([root.clone()]);
        assert_eq!(p.check(&root.join("src/main.rs")), None);
        assert!(p.check(&root.join(".husky-like/x")).is_some());
    }

    #[test]
    fn paths_outside_the_roots_are_judged_by_the_table_only() {
        let (_d, _root, p) = location();
        assert_eq!(p.check(Path::new("/elsewhere/.cache/x")), None);
    }
}
