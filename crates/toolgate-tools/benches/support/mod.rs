//! The sandbox for the bash benches: `toolgate-sandbox` behind the bash
//! tool's port, as the toolgate binary wires it (the location's roots,
//! this crate's default protected and credential lists, no network), with
//! the bench executable itself as the helper — each bench calls
//! [`toolgate_sandbox::run_if_requested`] first thing in `main`.

use std::path::PathBuf;

use toolgate_core::Failure;
use toolgate_sandbox::{SandboxSpec, Support};
use toolgate_tools::process_tools::{CommandSandbox, ConfineRequest, ConfinedCommand};

#[derive(Debug)]
pub struct Sandbox {
    pub support: Support,
}

impl Sandbox {
    /// The machine's sandbox, or `None` (with the reasons printed) where it
    /// is not available.
    pub fn detect() -> Option<Sandbox> {
        let support = toolgate_sandbox::detect();
        if !support.available {
            eprintln!("sandbox unavailable: {:?}", support.reasons);
            return None;
        }
        Some(Sandbox { support })
    }
}

impl CommandSandbox for Sandbox {
    fn confine(&self, request: &ConfineRequest<'_>) -> Result<Option<ConfinedCommand>, Failure> {
        let roots: Vec<PathBuf> = request.location.roots().map(PathBuf::from).collect();
        let mut spec = SandboxSpec::for_location(roots, None);
        spec.cwd = request.workdir.to_path_buf();
        spec.network = request.network;
        let mut confined = spec
            .command(&self.support, request.program, request.args)
            .map_err(Failure::of)?;
        let command = std::mem::replace(&mut confined.command, std::process::Command::new("false"));
        Ok(Some(ConfinedCommand {
            command,
            guard: Box::new(confined),
            refuses: "the bench's sandbox".into(),
            staged: None,
            env_allowlist: Some(Vec::new()),
        }))
    }
}
