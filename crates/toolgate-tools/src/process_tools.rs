//! Being built.

use toolgate_core::{Registration, Registry, RegistryError};

/// Settings of these tools.
#[derive(Clone, Debug, Default)]
pub struct ProcessToolsConfig {}

/// Registers these tools.
pub fn register(
    _registry: &Registry,
    _config: &ProcessToolsConfig,
) -> Result<Vec<Registration>, RegistryError> {
    Ok(Vec::new())
}
