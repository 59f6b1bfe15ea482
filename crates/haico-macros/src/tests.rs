//! Every misuse of `#[workspace_tools]` / `#[workspace_tool]`, one test per case, run through the
//! same expansion functions the proc-macro entry points call.
//!
//! Each test feeds the attribute's arguments (`attr`) and the item it sits on (`item`), written
//! as a user would write them, and checks that the expansion is exactly one `compile_error!` with
//! the message rustc shows (the first line of `error: ...`, plus its `= help:` line when there is
//! one), followed by the item with its `#[workspace_tool]` attributes removed, so rustc reports
//! no second error. Every one of these errors is the macro's own; none needs rustc to type-check
//! anything. The comment above each test says which tokens rustc underlines; the spans are not
//! asserted: outside a real expansion `proc_macro2` knows no span locations unless built with its
//! `span-locations` feature, and in `cargo test --workspace` that feature would carry over to the
//! `proc_macro2` every other proc macro of the build uses, rebuilding them all.
//!
//! The well-formed collections are compiled and run by the integration tests, in
//! `tests/integration/tools/macro_cases/`.

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use syn::{ImplItem, Item, LitStr};

use crate::{collection, tool_attr};

/// The messages of the `compile_error!` invocations in `out`, in order, and the tokens around
/// them (the item the expansion keeps).
fn split_errors(out: TokenStream) -> (Vec<String>, TokenStream) {
    let mut messages = Vec::new();
    let mut rest: Vec<TokenTree> = Vec::new();
    let mut tokens = out.into_iter().peekable();
    while let Some(token) = tokens.next() {
        if let TokenTree::Ident(ident) = &token
            && ident == "compile_error"
        {
            let bang = tokens.next();
            let args = tokens.next();
            match (bang, args) {
                (Some(TokenTree::Punct(bang)), Some(TokenTree::Group(args)))
                    if bang.as_char() == '!' =>
                {
                    let message: LitStr = syn::parse2(args.stream()).unwrap_or_else(|error| {
                        panic!("compile_error! without a message: {error}")
                    });
                    messages.push(message.value());
                }
                other => panic!("malformed compile_error! invocation: {other:?}"),
            }
            // Drop the `::core::` (or `core::`) prefix of the invocation from the kept tokens.
            strip_path_prefix(&mut rest);
            continue;
        }
        rest.push(token);
    }
    (messages, rest.into_iter().collect())
}

/// Removes a trailing `::core::` / `core::` / `::std::` / `std::` from `tokens`.
fn strip_path_prefix(tokens: &mut Vec<TokenTree>) {
    let is_colon = |token: Option<&TokenTree>| matches!(token, Some(TokenTree::Punct(punct)) if punct.as_char() == ':');
    let len = tokens.len();
    if len >= 3
        && is_colon(tokens.get(len - 1))
        && is_colon(tokens.get(len - 2))
        && matches!(tokens.get(len - 3), Some(TokenTree::Ident(ident)) if ident == "core" || ident == "std")
    {
        tokens.truncate(len - 3);
        let len = tokens.len();
        if len >= 2 && is_colon(tokens.get(len - 1)) && is_colon(tokens.get(len - 2)) {
            tokens.truncate(len - 2);
        }
    }
}

/// Expands `#[workspace_tools(attr)]` on `item` and checks that it fails with exactly `expected`
/// and keeps the item, minus its `#[workspace_tool]` attributes.
fn assert_collection_error(attr: TokenStream, item: TokenStream, expected: &str) {
    let (messages, rest) = split_errors(collection::workspace_tools(attr, item));
    assert_eq!(messages, [expected]);

    let kept: syn::File = syn::parse2(rest.clone())
        .unwrap_or_else(|error| panic!("the kept item does not parse ({error}): {rest}"));
    assert!(!kept.items.is_empty(), "the expansion dropped the item");
    for item in &kept.items {
        let Item::Impl(item_impl) = item else {
            continue;
        };
        for method in &item_impl.items {
            if let ImplItem::Fn(method) = method {
                assert!(
                    !method.attrs.iter().any(tool_attr::is_tool_attr),
                    "a #[workspace_tool] survived on `{}`: {rest}",
                    method.sig.ident
                );
            }
        }
    }
}

/// `#[workspace_tools]` on an impl block of `DemoTools` whose one tool has attribute arguments
/// `tool_args` and signature `sig`.
fn demo_tools(tool_args: TokenStream, sig: TokenStream) -> TokenStream {
    quote! {
        impl DemoTools {
            #[workspace_tool(#tool_args)]
            #sig {
                Ok("listed".into())
            }
        }
    }
}

// Underlined: `&String`.
#[test]
fn fail_args_by_reference() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list", description = "List the notes"),
            quote!(async fn list(&self, _edit: &mut Edit, _args: &String) -> ToolResult),
        ),
        "the args parameter must be an owned struct deriving `serde::Deserialize` and \
         `schemars::JsonSchema`; take it by value, e.g. `args: String`",
    );
}

// Underlined: `" "`.
#[test]
fn fail_attr_empty_description() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list", description = " "),
            quote!(async fn list(&self, _edit: &mut Edit) -> ToolResult),
        ),
        "tool `description` must not be empty: tell the model what the tool does and when to use \
         it",
    );
}

// Underlined: `""`.
#[test]
fn fail_attr_empty_name() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "", description = "List the notes"),
            quote!(async fn list(&self, _edit: &mut Edit) -> ToolResult),
        ),
        "tool `name` must not be empty: use 1 to 64 characters from lowercase ASCII letters \
         `a-z`, digits `0-9` and `_` (LLM providers require function names of that shape), e.g. \
         `add_todos`",
    );
}

// Underlined: the whole `#[workspace_tool(name = "list")]`.
#[test]
fn fail_attr_missing_description() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list"),
            quote!(async fn list(&self, _edit: &mut Edit) -> ToolResult),
        ),
        "Missing field `description`\n  = help: write `#[workspace_tool(name = \
         \"snake_case_name\", description = \"what the tool does and when to use it\")]`",
    );
}

// Underlined: the whole `#[workspace_tool(description = "List the notes")]`.
#[test]
fn fail_attr_missing_name() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(description = "List the notes"),
            quote!(async fn list(&self, _edit: &mut Edit) -> ToolResult),
        ),
        "Missing field `name`\n  = help: write `#[workspace_tool(name = \"snake_case_name\", \
         description = \"what the tool does and when to use it\")]`",
    );
}

// Underlined: `#[workspace_tool]`.
#[test]
fn fail_attr_not_a_list() {
    let item = quote! {
        impl DemoTools {
            #[workspace_tool]
            async fn list(&self, _edit: &mut Edit) -> ToolResult {
                Ok("listed".into())
            }
        }
    };
    assert_collection_error(
        TokenStream::new(),
        item,
        "`#[workspace_tool]` needs a `name` and a `description`: write `#[workspace_tool(name = \
         \"snake_case_name\", description = \"what the tool does and when to use it\")]`",
    );
}

// Underlined: `hidden`.
#[test]
fn fail_attr_unknown_key() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list", description = "List the notes", hidden = true),
            quote!(async fn list(&self, _edit: &mut Edit) -> ToolResult),
        ),
        "Unknown field: `hidden`. Available values: `description`, `name`, `read_only`\n  = help: \
         write `#[workspace_tool(name = \"snake_case_name\", description = \"what the tool does \
         and when to use it\")]`",
    );
}

// Underlined: the second `"list"`.
#[test]
fn fail_duplicate_name() {
    let item = quote! {
        impl DemoTools {
            #[workspace_tool(name = "list", description = "List the notes")]
            async fn list(&self, _edit: &mut Edit) -> ToolResult {
                Ok("listed".into())
            }

            #[workspace_tool(name = "list", description = "List the notes, newest first")]
            async fn list_newest(&self, _edit: &mut Edit) -> Result<String, ToolError> {
                Ok("listed".to_string())
            }
        }
    };
    assert_collection_error(
        TokenStream::new(),
        item,
        "duplicate tool name `list`: method `list` already declares a tool with this name; tool \
         names must be unique within a collection",
    );
}

// Underlined: `<T: Send + Sync + 'static>`.
#[test]
fn fail_generic_impl() {
    let item = quote! {
        impl<T: Send + Sync + 'static> DemoTools<T> {
            #[workspace_tool(name = "list", description = "List the notes")]
            async fn list(&self, _edit: &mut Edit) -> ToolResult {
                Ok("listed".into())
            }
        }
    };
    assert_collection_error(
        TokenStream::new(),
        item,
        "a tool collection cannot be generic: its tool table is a `static`, which cannot depend \
         on the impl's type or lifetime parameters; mark an impl block of a concrete type instead",
    );
}

// Underlined: the `)` closing the parameter list.
#[test]
fn fail_missing_return_type() {
    let item = quote! {
        impl DemoTools {
            #[workspace_tool(name = "list", description = "List the notes")]
            async fn list(&self, _edit: &mut Edit) {}
        }
    };
    assert_collection_error(
        TokenStream::new(),
        item,
        "tool method `list` has no return type: it must return `ToolResult` or `Result<String, \
         ToolError>`",
    );
}

// Underlined: `&mut self`.
#[test]
fn fail_mut_self() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list", description = "List the notes"),
            quote!(async fn list(&mut self, _edit: &mut Edit) -> ToolResult),
        ),
        "tool method `list` must take `&self`, not `&mut self`: the runtime shares one collection \
         value between calls; keep changing state in the workspace, through `edit`",
    );
}

// Underlined: `"List-Notes"`.
#[test]
fn fail_name_invalid_chars() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "List-Notes", description = "List the notes"),
            quote!(async fn list(&self, _edit: &mut Edit) -> ToolResult),
        ),
        "invalid tool name `List-Notes`: 'L' is not allowed; use 1 to 64 characters from \
         lowercase ASCII letters `a-z`, digits `0-9` and `_` (LLM providers require function \
         names of that shape), e.g. `list_notes`",
    );
}

// Underlined: the name's string literal.
#[test]
fn fail_name_too_long() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(
                name = "list_every_single_note_of_the_workspace_in_the_order_they_were_added",
                description = "List the notes"
            ),
            quote!(async fn list(&self, _edit: &mut Edit) -> ToolResult),
        ),
        "tool name `list_every_single_note_of_the_workspace_in_the_order_they_were_added` is 68 \
         characters long: use 1 to 64 characters from lowercase ASCII letters `a-z`, digits \
         `0-9` and `_` (LLM providers require function names of that shape)",
    );
}

// Underlined: the parameter list `(_edit: &mut Edit)`.
#[test]
fn fail_no_receiver() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list", description = "List the notes"),
            quote!(async fn list(_edit: &mut Edit) -> ToolResult),
        ),
        "tool method `list` needs a `&self` receiver: expected `(&self, edit: &mut Edit)` or \
         `(&self, edit: &mut Edit, args: YourArgs)` (a `read_only` tool takes `view: &mut View` \
         instead)",
    );
}

// Underlined: the self type, `DemoTools`.
#[test]
fn fail_no_tools() {
    let item = quote! {
        impl DemoTools {
            fn helper(&self) -> usize {
                0
            }
        }
    };
    assert_collection_error(
        TokenStream::new(),
        item,
        "this `#[workspace_tools]` impl block declares no tools: mark at least one `async fn` \
         method with `#[workspace_tool(name = \"snake_case_name\", description = \"what the tool \
         does and when to use it\")]`",
    );
}

// Underlined: the parameter list `(&self)`.
#[test]
fn fail_no_workspace() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list", description = "List the notes"),
            quote!(async fn list(&self) -> ToolResult),
        ),
        "tool method `list` takes nothing besides `&self`, but every tool receives its \
         workspace: expected `(&self, edit: &mut Edit)` or `(&self, edit: &mut Edit, args: \
         YourArgs)` (a `read_only` tool takes `view: &mut View` instead)",
    );
}

// Underlined: the struct's name, `DemoTools`.
#[test]
fn fail_not_an_impl() {
    assert_collection_error(
        TokenStream::new(),
        quote!(
            struct DemoTools;
        ),
        "`#[workspace_tools]` goes on an inherent impl block, like `impl PlanTools { ... }`, not \
         on a struct; put the tool methods in an `impl` block of the collection struct and mark \
         that block",
    );
}

// Underlined: `fn`.
#[test]
fn fail_not_async() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list", description = "List the notes"),
            quote!(fn list(&self, _edit: &mut Edit) -> ToolResult),
        ),
        "tool method `list` must be `async`: write `async fn list(...)`",
    );
}

// Underlined: `Edit` in `_edit: &mut Edit`.
#[test]
fn fail_read_only_takes_edit() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "peek", read_only, description = "Look at the plan."),
            quote!(async fn peek(&self, _edit: &mut Edit) -> ToolResult),
        ),
        "tool `peek` is declared `read_only`, so it runs on a read snapshot: take `view: &mut \
         View`, or drop `read_only` if it writes",
    );
}

// Underlined: `self`.
#[test]
fn fail_self_by_value() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list", description = "List the notes"),
            quote!(async fn list(self, _edit: &mut Edit) -> ToolResult),
        ),
        "tool method `list` must take `&self`, not `self` by value: the runtime shares one \
         collection value between calls",
    );
}

// Underlined: the extra parameters, `_limit: u32, _offset: u32`.
#[test]
fn fail_too_many_params() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list", description = "List the notes"),
            quote!(
                async fn list(&self, _edit: &mut Edit, _limit: u32, _offset: u32) -> ToolResult
            ),
        ),
        "tool method `list` has 3 parameters after `&self`: expected `(&self, edit: &mut Edit)` \
         or `(&self, edit: &mut Edit, args: YourArgs)` (a `read_only` tool takes `view: &mut \
         View` instead)\n  = help: put every input of the tool into one args struct deriving \
         `serde::Deserialize` and `schemars::JsonSchema`",
    );
}

// `#[workspace_tool]` on a method of an impl block without `#[workspace_tools]`: the attribute
// expands on its own. Underlined: the whole `#[workspace_tool(...)]` (the call site).
#[test]
fn fail_tool_outside_collection() {
    let item = quote! {
        async fn list(&self, _edit: &mut Edit) -> ToolResult {
            Ok("listed".into())
        }
    };
    let out = tool_attr::outside_collection(
        quote!(name = "list", description = "List the notes"),
        item.clone(),
    );
    let (messages, rest) = split_errors(out);
    assert_eq!(
        messages,
        [
            "`#[workspace_tool]` only works on methods of an impl block marked \
          `#[workspace_tools]`\n  = help: add `#[workspace_tools]` to the enclosing `impl` block"
        ]
    );
    assert_eq!(
        rest.to_string(),
        item.to_string(),
        "the method must be kept"
    );
}

// Underlined: the arguments, `name = "demo"`.
#[test]
fn fail_tools_with_args() {
    assert_collection_error(
        quote!(name = "demo"),
        demo_tools(
            quote!(name = "list", description = "List the notes"),
            quote!(async fn list(&self, _edit: &mut Edit) -> ToolResult),
        ),
        "`#[workspace_tools]` takes no arguments; give each tool method its own \
         `#[workspace_tool(name = \"snake_case_name\", description = \"what the tool does and \
         when to use it\")]`",
    );
}

// Underlined: `Listing for`.
#[test]
fn fail_trait_impl() {
    let item = quote! {
        impl Listing for DemoTools {
            #[workspace_tool(name = "list", description = "List the notes")]
            async fn list(&self, _edit: &mut Edit) -> ToolResult {
                Ok("listed".into())
            }
        }
    };
    assert_collection_error(
        TokenStream::new(),
        item,
        "`#[workspace_tools]` goes on an inherent impl block, like `impl DemoTools { ... }`, not \
         on a trait impl: it implements `ToolCollection` for the type itself",
    );
}

// Underlined: `View` in `_view: &mut View`.
#[test]
fn fail_view_without_read_only() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "peek", description = "Look at the plan."),
            quote!(async fn peek(&self, _view: &mut View) -> ToolResult),
        ),
        "tool `peek` takes a `View`, which cannot write: declare it `#[workspace_tool(read_only, \
         ...)]`, or take `edit: &mut Edit`",
    );
}

// Underlined: `&Edit`.
#[test]
fn fail_workspace_not_mut() {
    assert_collection_error(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list", description = "List the notes"),
            quote!(async fn list(&self, _edit: &Edit) -> ToolResult),
        ),
        "the first parameter after `&self` receives the call's workspace and must be `edit: &mut \
         Edit` (or `view: &mut View` for a `read_only` tool)",
    );
}

/// The helpers themselves: a well-formed collection expands without any `compile_error!`.
#[test]
fn a_well_formed_collection_has_no_compile_error() {
    let out = collection::workspace_tools(
        TokenStream::new(),
        demo_tools(
            quote!(name = "list", description = "List the notes"),
            quote!(async fn list(&self, _edit: &mut Edit) -> ToolResult),
        ),
    );
    let (messages, _) = split_errors(out);
    assert!(messages.is_empty(), "{messages:?}");
}
