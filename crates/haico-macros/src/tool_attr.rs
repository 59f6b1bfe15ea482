//! The per-method `#[workspace_tool(name = "...", description = "...")]` attribute: recognising
//! it, parsing its arguments with darling and validating them.

use darling::{FromMeta, ast::NestedMeta};
use proc_macro2::{Span, TokenStream};
use syn::{Attribute, Error, LitStr, Meta};

use crate::errors::Errors;

/// The attribute's name, as users write it (`#[workspace_tool(...)]`).
const ATTR_NAME: &str = "workspace_tool";

/// The longest tool name LLM providers accept for a function.
pub(crate) const MAX_NAME_LEN: usize = 64;

/// How the attribute is written, quoted in error messages.
pub(crate) const USAGE: &str = "`#[workspace_tool(name = \"snake_case_name\", description = \"what the tool does and when to use it\")]`";

/// The attribute's arguments, exactly as darling parses them.
#[derive(Debug, FromMeta)]
struct RawToolAttr {
    name: LitStr,
    description: LitStr,
    #[darling(default)]
    read_only: bool,
}

/// The validated arguments of one `#[workspace_tool]`.
#[derive(Debug, Clone)]
pub(crate) struct ToolAttr {
    /// The name the model calls the tool by; `[a-z0-9_]{1,64}`.
    pub(crate) name: LitStr,
    /// What the tool does, for the model; never blank.
    pub(crate) description: LitStr,
    /// The tool only reads: the runtime runs it on a read-only snapshot.
    pub(crate) read_only: bool,
}

/// Whether `attr` is a `#[workspace_tool]` (also written as a path, e.g.
/// `#[haico::tools::workspace_tool]`).
pub(crate) fn is_tool_attr(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == ATTR_NAME)
}

/// Parses and validates the arguments of a `#[workspace_tool(...)]` attribute.
pub(crate) fn parse(attr: &Attribute) -> syn::Result<ToolAttr> {
    let list = match &attr.meta {
        Meta::List(list) => list,
        Meta::Path(_) => {
            return Err(Error::new_spanned(
                attr,
                format!("`#[workspace_tool]` needs a `name` and a `description`: write {USAGE}"),
            ));
        }
        Meta::NameValue(_) => {
            return Err(Error::new_spanned(
                attr,
                format!("`#[workspace_tool = ...]` is not supported: write {USAGE}"),
            ));
        }
    };
    let items = NestedMeta::parse_meta_list(list.tokens.clone())?;
    let raw = RawToolAttr::from_list(&items).map_err(|error| from_darling(error, attr))?;

    let mut errors = Errors::default();
    errors.keep(validate_name(&raw.name));
    if raw.description.value().trim().is_empty() {
        errors.push(Error::new(
            raw.description.span(),
            "tool `description` must not be empty: tell the model what the tool does and when \
             to use it",
        ));
    }
    errors.finish()?;
    Ok(ToolAttr {
        name: raw.name,
        description: raw.description,
        read_only: raw.read_only,
    })
}

/// Checks that a tool name has the shape every LLM provider accepts for a function name:
/// 1 to 64 characters from `a-z`, `0-9` and `_`.
pub(crate) fn validate_name(name: &LitStr) -> syn::Result<()> {
    let value = name.value();
    let allowed = "use 1 to 64 characters from lowercase ASCII letters `a-z`, digits `0-9` and \
                   `_` (LLM providers require function names of that shape)";
    if value.is_empty() {
        return Err(Error::new(
            name.span(),
            format!("tool `name` must not be empty: {allowed}, e.g. `add_todos`"),
        ));
    }
    if let Some(bad) = value.chars().find(|&c| !is_name_char(c)) {
        return Err(Error::new(
            name.span(),
            format!(
                "invalid tool name `{value}`: {bad:?} is not allowed; {allowed}, e.g. `{}`",
                suggest_name(&value)
            ),
        ));
    }
    let len = value.chars().count();
    if len > MAX_NAME_LEN {
        return Err(Error::new(
            name.span(),
            format!("tool name `{value}` is {len} characters long: {allowed}"),
        ));
    }
    Ok(())
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'
}

/// A valid name close to `value`, for the error hint.
fn suggest_name(value: &str) -> String {
    let mut suggestion = String::new();
    for c in value.chars() {
        let c = c.to_ascii_lowercase();
        let c = if is_name_char(c) { c } else { '_' };
        if !(c == '_' && suggestion.ends_with('_')) {
            suggestion.push(c);
        }
    }
    let suggestion: String = suggestion
        .trim_matches('_')
        .chars()
        .take(MAX_NAME_LEN)
        .collect();
    if suggestion.is_empty() {
        "my_tool".to_string()
    } else {
        suggestion
    }
}

/// Turns darling's errors (missing or unknown keys, wrong literal types) into spanned syn
/// errors with a hint on how the attribute is written.
fn from_darling(error: darling::Error, attr: &Attribute) -> Error {
    let mut errors = Errors::default();
    for error in error.flatten() {
        let message = format!("{error}\n  = help: write {USAGE}");
        errors.push(match error.explicit_span() {
            Some(span) => Error::new(span, message),
            None => Error::new_spanned(attr, message),
        });
    }
    match errors.finish() {
        Ok(()) => Error::new_spanned(attr, format!("invalid `#[workspace_tool]`: write {USAGE}")),
        Err(error) => error,
    }
}

/// Expansion of `#[workspace_tool]` on its own. `#[workspace_tools]` strips the attribute from
/// the methods of its impl block before it can expand, so reaching this means the attribute sits
/// somewhere else. Reports that and keeps `item` unchanged so no follow-up errors appear.
pub(crate) fn outside_collection(_attr: TokenStream, item: TokenStream) -> TokenStream {
    let error = Error::new(
        Span::call_site(),
        "`#[workspace_tool]` only works on methods of an impl block marked `#[workspace_tools]`\n  \
         = help: add `#[workspace_tools]` to the enclosing `impl` block",
    );
    let mut out = error.to_compile_error();
    out.extend(item);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn parse_err(attr: &Attribute) -> String {
        match parse(attr) {
            Ok(parsed) => format!("unexpectedly parsed {parsed:?}"),
            Err(error) => error
                .into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(" | "),
        }
    }

    #[test]
    fn parses_name_and_description() -> syn::Result<()> {
        let attr: Attribute =
            parse_quote!(#[workspace_tool(name = "add_todos", description = "Add todos")]);
        assert!(is_tool_attr(&attr));
        let parsed = parse(&attr)?;
        assert_eq!(parsed.name.value(), "add_todos");
        assert_eq!(parsed.description.value(), "Add todos");
        Ok(())
    }

    #[test]
    fn recognises_path_forms_only_for_the_tool_attribute() {
        let pathed: Attribute =
            parse_quote!(#[haico::tools::workspace_tool(name = "a", description = "b")]);
        let collection: Attribute = parse_quote!(#[workspace_tools]);
        let doc: Attribute = parse_quote!(#[doc = "x"]);
        assert!(is_tool_attr(&pathed));
        assert!(!is_tool_attr(&collection));
        assert!(!is_tool_attr(&doc));
    }

    #[test]
    fn missing_and_unknown_keys_are_reported() {
        let missing: Attribute = parse_quote!(#[workspace_tool(name = "a")]);
        let message = parse_err(&missing);
        assert!(message.contains("Missing field `description`"), "{message}");
        assert!(message.contains("help: write"), "{message}");

        let unknown: Attribute =
            parse_quote!(#[workspace_tool(name = "a", description = "b", nmae = "c")]);
        let message = parse_err(&unknown);
        assert!(message.contains("Unknown field: `nmae`"), "{message}");

        let bare: Attribute = parse_quote!(#[workspace_tool]);
        assert!(parse_err(&bare).contains("needs a `name` and a `description`"));
    }

    #[test]
    fn empty_values_are_rejected() {
        let attr: Attribute = parse_quote!(#[workspace_tool(name = "", description = "  ")]);
        let message = parse_err(&attr);
        assert!(
            message.contains("tool `name` must not be empty"),
            "{message}"
        );
        assert!(
            message.contains("tool `description` must not be empty"),
            "{message}"
        );
    }

    #[test]
    fn names_must_fit_provider_rules() {
        let ok: LitStr = parse_quote!("list_todos_2");
        assert!(validate_name(&ok).is_ok());

        let dashed: LitStr = parse_quote!("Add-Todos");
        let message = validate_name(&dashed)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            message.contains("invalid tool name `Add-Todos`"),
            "{message}"
        );
        assert!(message.contains("e.g. `add_todos`"), "{message}");

        let long = LitStr::new(&"a".repeat(MAX_NAME_LEN + 1), Span::call_site());
        let message = validate_name(&long)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(message.contains("is 65 characters long"), "{message}");

        let longest = LitStr::new(&"a".repeat(MAX_NAME_LEN), Span::call_site());
        assert!(validate_name(&longest).is_ok());
    }

    #[test]
    fn standalone_expansion_is_an_error_that_keeps_the_item() {
        let item: TokenStream = quote::quote!(
            async fn lonely(&self) {}
        );
        let out = outside_collection(TokenStream::new(), item).to_string();
        assert!(out.contains("compile_error"), "{out}");
        assert!(
            out.contains("only works on methods of an impl block marked"),
            "{out}"
        );
        assert!(out.contains("fn lonely"), "{out}");
    }
}
