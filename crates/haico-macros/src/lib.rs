//! Attribute macros that declare haico workspace tools.
//!
//! A tool collection is a `*Tools` struct whose tools are `async` methods of one inherent impl
//! block. `#[workspace_tools]` on that impl block turns every method marked
//! `#[workspace_tool(name = "...", description = "...")]` into an entry of the collection's
//! `::haico::tools::ToolCollection` implementation: a lazily built `ToolSpec` (with the JSON
//! Schema of the method's argument struct) plus glue that parses the model's JSON arguments and
//! awaits the method.
//!
//! The crate is meant to be used through its re-exports in `haico::tools`; the generated code
//! names `::haico::…` paths.

mod collection;
mod errors;
mod signature;
mod tool_attr;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;

use proc_macro::TokenStream;

/// Implements `haico::tools::ToolCollection` for the self type of an inherent impl block, with
/// one tool per method marked `#[workspace_tool(name = "...", description = "...")]`.
///
/// Tool methods must look like `async fn name(&self, edit: &mut Edit) -> ToolResult` or
/// `async fn name(&self, edit: &mut Edit, args: YourArgs) -> ToolResult`, where `YourArgs`
/// derives `serde::Deserialize` and `schemars::JsonSchema`; a tool declared `read_only` takes
/// `view: &mut View` instead of the edit (a read snapshot it cannot write through). Other
/// methods are left untouched.
#[proc_macro_attribute]
pub fn workspace_tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    collection::workspace_tools(attr.into(), item.into()).into()
}

/// Marks a method of a `#[workspace_tools]` impl block as a tool:
/// `#[workspace_tool(name = "snake_case_name", description = "what it does and when to use it")]`.
///
/// `#[workspace_tools]` consumes this attribute; expanding it anywhere else is a compile error.
#[proc_macro_attribute]
pub fn workspace_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool_attr::outside_collection(attr.into(), item.into()).into()
}
