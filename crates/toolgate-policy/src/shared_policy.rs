//! [`SharedPolicy`]: the policy in force, one handle shared by the gate and by
//! whatever else reads the policy at each use (the channel order of
//! [`People`](crate::people::People)). A reload swaps the whole policy; a
//! reader keeps the `Arc` it took for as long as one decision or one ask lasts.

use std::sync::{Arc, PoisonError, RwLock};

use crate::policy::Policy;

/// A shared, swappable handle on the policy in force. Clones share it.
///
/// ```
/// # use std::path::Path;
/// use toolgate_policy::policy::Policy;
/// use toolgate_policy::shared_policy::SharedPolicy;
/// let load = |text: &str| {
///     let texts = [("user.toml", toolgate_policy::rules::Layer::User, text)];
///     Policy::from_texts(Path::new("/ws"), Path::new("/home/u"), &texts, None).unwrap()
/// };
/// let shared = SharedPolicy::new(load(""));
/// let reader = shared.clone();
/// shared.replace(load("[approvals]\nescalate_after = 5\n"));
/// assert_eq!(reader.current().escalate_after().as_secs(), 5);
/// ```
#[derive(Clone)]
pub struct SharedPolicy(Arc<RwLock<Arc<Policy>>>);

impl SharedPolicy {
    /// A handle on `policy`.
    pub fn new(policy: Policy) -> Self {
        SharedPolicy(Arc::new(RwLock::new(Arc::new(policy))))
    }

    /// The policy in force now.
    pub fn current(&self) -> Arc<Policy> {
        Arc::clone(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Puts `policy` in force for every holder of this handle.
    pub fn replace(&self, policy: Policy) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(policy);
    }
}

impl std::fmt::Debug for SharedPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SharedPolicy")
            .field(&self.current())
            .finish()
    }
}
