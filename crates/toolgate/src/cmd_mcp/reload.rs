//! A server's policy follows its config files: they are polled, and a changed
//! one is reloaded into the gate.

use std::sync::Arc;

use toolgate_policy::gate::PolicyGate;
use toolgate_policy::policy::PolicySources;

/// How often a server looks for changed config files.
const RELOAD_POLL: std::time::Duration = std::time::Duration::from_secs(2);

/// Reloads the policy of `gate` whenever one of the config files of `sources`
/// changes. A config that fails to load is reported and the last valid policy
/// stays in force. Abort the returned handle to stop watching.
pub fn spawn_policy_reloader(
    gate: Arc<PolicyGate>,
    sources: PolicySources,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut seen = config_stamps(&sources);
        loop {
            tokio::time::sleep(RELOAD_POLL).await;
            let now = config_stamps(&sources);
            if now == seen {
                continue;
            }
            seen = now;
            match gate.reload(&sources) {
                Ok(()) => {
                    eprintln!("toolgate: policy reloaded");
                    if let Some(notice) = gate.policy().project_notice() {
                        eprintln!("toolgate: {notice}");
                    }
                }
                Err(e) => {
                    eprintln!("toolgate: config error, keeping the last valid policy: {e}")
                }
            }
        }
    })
}

/// The modification times (and presence) of every config file of `sources`.
fn config_stamps(sources: &PolicySources) -> Vec<Option<std::time::SystemTime>> {
    sources
        .user
        .iter()
        .chain(sources.project.iter())
        .chain(sources.session_files.iter())
        .chain(sources.managed.iter())
        .chain(sources.trust.iter())
        .map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .collect()
}
