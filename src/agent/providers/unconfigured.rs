//! The stand-in used when no usable model is configured: the server runs normally and every
//! chat turn ends with an error that says how to configure one.

use async_trait::async_trait;

use crate::agent::model::{ChatModel, ModelRequest, ModelStream, ProviderError};

/// A model that refuses every call with [`ProviderError::NotConfigured`].
#[derive(Debug, Clone)]
pub struct UnconfiguredModel {
    reason: String,
}

impl UnconfiguredModel {
    /// `reason` says what is missing, e.g. "no provider is set".
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }
}

#[async_trait]
impl ChatModel for UnconfiguredModel {
    fn describe(&self) -> String {
        format!("no language model ({})", self.reason)
    }

    fn is_configured(&self) -> bool {
        false
    }

    async fn stream(&self, _request: &ModelRequest) -> Result<ModelStream, ProviderError> {
        Err(ProviderError::NotConfigured(self.reason.clone()))
    }
}
