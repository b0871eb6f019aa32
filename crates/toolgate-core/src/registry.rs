//! The registry in two layers, the catalogue the model sees, and stale detection.
//!
//! A [`Registry`] is one layer: names map to a stack of registrations, the newest
//! active one wins, and dropping a [`Registration`] guard removes only that
//! registration, revealing the one below. A [`ToolSet`] stacks a location layer
//! over a process layer (shared by all locations); the location layer wins.
//!
//! [`ToolSet::materialize`] produces a [`Catalogue`]: the definitions the model sees,
//! each remembered with the identity of the registration advertised, so that a call
//! settled later against a replaced or removed registration is refused as stale.
//!
//! ```
//! use toolgate_core::{Registry, ToolSet};
//! let process = Registry::new();
//! let tools = ToolSet::new(process, Registry::new());
//! let catalogue = tools.materialize(|_| true);
//! assert!(catalogue.is_empty());
//! ```

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::tool::{SchemaError, Tool, ToolHandler, ToolSpec, handler};

/// Errors from registration and lookup.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The name does not match `^[A-Za-z][A-Za-z0-9_-]{0,63}$`.
    #[error(
        "invalid tool name {0:?}: must start with a letter and contain only letters, digits, '_' or '-', at most 64 characters"
    )]
    InvalidName(String),
    /// The tool's schemas could not be built.
    #[error(transparent)]
    Schema(#[from] SchemaError),
}

/// Why a name could not be settled against the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// Never advertised in this catalogue.
    #[error("Unknown tool: {0}")]
    Unknown(String),
    /// Advertised, but replaced or removed since.
    #[error("Stale tool call: {0}")]
    Stale(String),
}

/// Checks a tool name against `^[A-Za-z][A-Za-z0-9_-]{0,63}$`.
pub fn valid_tool_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

static NEXT_REGISTRATION: AtomicU64 = AtomicU64::new(1);

#[derive(Clone)]
struct Entry {
    id: u64,
    handler: Arc<dyn ToolHandler>,
}

#[derive(Default)]
struct Layer {
    by_name: HashMap<String, Vec<Entry>>,
}

/// One layer of registrations. Cheap to clone; clones share state.
#[derive(Clone, Default)]
pub struct Registry {
    inner: Arc<Mutex<Layer>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.lock().by_name.keys().cloned().collect();
        f.debug_struct("Registry").field("names", &names).finish()
    }
}

/// Holds a registration; dropping it removes that registration only.
#[must_use = "dropping the guard unregisters the tool"]
pub struct Registration {
    layer: Arc<Mutex<Layer>>,
    name: String,
    id: u64,
}

impl Registration {
    /// The registration's unique identity.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Keeps the registration for the life of the process.
    pub fn leak(self) {
        std::mem::forget(self);
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("name", &self.name)
            .field("id", &self.id)
            .finish()
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut layer = self.layer.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(stack) = layer.by_name.get_mut(&self.name) {
            stack.retain(|e| e.id != self.id);
            if stack.is_empty() {
                layer.by_name.remove(&self.name);
            }
        }
    }
}

impl Registry {
    /// An empty layer.
    pub fn new() -> Self {
        Registry::default()
    }

    fn lock(&self) -> MutexGuard<'_, Layer> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a typed tool under `name`.
    pub fn register<T: Tool>(&self, name: &str, tool: T) -> Result<Registration, RegistryError> {
        if !valid_tool_name(name) {
            return Err(RegistryError::InvalidName(name.to_string()));
        }
        self.register_handler(name, handler(tool)?)
    }

    /// Registers an already type-erased handler (for proxied upstream tools).
    pub fn register_handler(
        &self,
        name: &str,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<Registration, RegistryError> {
        if !valid_tool_name(name) {
            return Err(RegistryError::InvalidName(name.to_string()));
        }
        let id = NEXT_REGISTRATION.fetch_add(1, Ordering::Relaxed);
        self.lock()
            .by_name
            .entry(name.to_string())
            .or_default()
            .push(Entry { id, handler });
        Ok(Registration {
            layer: Arc::clone(&self.inner),
            name: name.to_string(),
            id,
        })
    }

    fn newest(&self, name: &str) -> Option<Entry> {
        self.lock()
            .by_name
            .get(name)
            .and_then(|s| s.last().cloned())
    }

    fn names(&self) -> Vec<String> {
        self.lock().by_name.keys().cloned().collect()
    }
}

/// The two layers together: location over process.
#[derive(Clone, Debug, Default)]
pub struct ToolSet {
    process: Registry,
    location: Registry,
}

/// A handler captured for one call, with the identity it was resolved under.
#[derive(Clone)]
pub struct ResolvedTool {
    /// The registration identity.
    pub id: u64,
    /// The handler, captured: later registry changes do not affect it.
    pub handler: Arc<dyn ToolHandler>,
}

impl ToolSet {
    /// Stacks `location` over `process`.
    pub fn new(process: Registry, location: Registry) -> Self {
        ToolSet { process, location }
    }

    /// The process layer.
    pub fn process(&self) -> &Registry {
        &self.process
    }

    /// The location layer.
    pub fn location(&self) -> &Registry {
        &self.location
    }

    /// The active registration of `name`: location layer first.
    pub fn active(&self, name: &str) -> Option<ResolvedTool> {
        self.location
            .newest(name)
            .or_else(|| self.process.newest(name))
            .map(|e| ResolvedTool {
                id: e.id,
                handler: e.handler,
            })
    }

    /// The catalogue the model sees, leaving out tools for which `visible` is
    /// false (tools the policy denies wholesale). Sorted by name.
    pub fn materialize(&self, visible: impl Fn(&str) -> bool) -> Catalogue {
        let mut names = self.process.names();
        names.extend(self.location.names());
        names.sort();
        names.dedup();
        self.catalogue_of(names, visible)
    }

    /// The part of [`materialize`](Self::materialize)'s catalogue that holds
    /// `name`: its one entry, or none. What a call settles against when its
    /// client never listed, without copying every other tool's definition.
    pub fn materialize_one(&self, name: &str, visible: impl Fn(&str) -> bool) -> Catalogue {
        self.catalogue_of(vec![name.to_string()], visible)
    }

    /// The entries of `names` (sorted, without duplicates) that are visible
    /// and active.
    fn catalogue_of(&self, names: Vec<String>, visible: impl Fn(&str) -> bool) -> Catalogue {
        let entries = names
            .into_iter()
            .filter(|n| visible(n))
            .filter_map(|name| {
                self.active(&name).map(|t| CatalogueEntry {
                    spec: Arc::clone(t.handler.spec()),
                    name,
                    id: t.id,
                })
            })
            .collect::<Vec<_>>();
        Catalogue {
            entries: entries.into(),
        }
    }

    /// Settles `name` against `catalogue`: the handler advertised, if it is still
    /// the active registration.
    pub fn settle(&self, catalogue: &Catalogue, name: &str) -> Result<ResolvedTool, LookupError> {
        let advertised = catalogue
            .get(name)
            .ok_or_else(|| LookupError::Unknown(name.to_string()))?;
        match self.active(name) {
            Some(t) if t.id == advertised.id => Ok(t),
            _ => Err(LookupError::Stale(name.to_string())),
        }
    }
}

/// One advertised tool.
#[derive(Clone, Debug)]
pub struct CatalogueEntry {
    /// The name.
    pub name: String,
    /// The registration identity advertised.
    pub id: u64,
    /// The definition (shared with the registration).
    pub spec: Arc<ToolSpec>,
}

/// What the model was shown, with identities for stale detection. Cheap to
/// clone (the entries are shared).
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    entries: Arc<[CatalogueEntry]>,
}

impl Catalogue {
    /// The entries, sorted by name.
    pub fn entries(&self) -> &[CatalogueEntry] {
        &self.entries
    }

    /// Whether nothing is advertised.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry for `name`.
    pub fn get(&self, name: &str) -> Option<&CatalogueEntry> {
        self.entries
            .binary_search_by(|e| e.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.entries[i])
    }
}
