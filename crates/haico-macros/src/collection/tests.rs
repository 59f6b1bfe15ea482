//! Expansion and error tests of `#[workspace_tools]` / `#[workspace_tool]`.

use super::*;
use syn::{File, ImplItemFn, ItemStatic, Stmt, parse_quote};

fn todo_tools() -> TokenStream {
    quote! {
        impl PlanTools {
            #[workspace_tool(name = "add_todos", description = "Add a whole outline")]
            async fn add_todos(&self, edit: &mut Edit, args: AddTodosArgs) -> ToolResult {
                todo_body()
            }

            /// Lists the plan.
            #[workspace_tool(name = "list_todos", read_only, description = "List the numbered plan")]
            async fn list_todos(&self, view: &mut View) -> ToolResult {
                list_body()
            }

            fn helper(&self) -> usize { 0 }
        }
    }
}

fn expand_ok(attr: TokenStream, item: TokenStream) -> syn::Result<File> {
    syn::parse2(expand(attr, item)?)
}

fn error_of(attr: TokenStream, item: TokenStream) -> String {
    match expand(attr, item) {
        Ok(tokens) => format!("unexpectedly expanded to {tokens}"),
        Err(error) => error
            .into_iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

fn impls(file: &File) -> Vec<&ItemImpl> {
    file.items
        .iter()
        .filter_map(|item| match item {
            Item::Impl(item_impl) => Some(item_impl),
            _ => None,
        })
        .collect()
}

fn fn_names(item_impl: &ItemImpl) -> Vec<String> {
    item_impl
        .items
        .iter()
        .filter_map(|item| match item {
            ImplItem::Fn(ImplItemFn { sig, .. }) => Some(sig.ident.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn expands_to_the_documented_shape() -> syn::Result<()> {
    let actual = expand_ok(TokenStream::new(), todo_tools())?;
    let expected: File = parse_quote! {
        impl PlanTools {
            async fn add_todos(&self, edit: &mut Edit, args: AddTodosArgs) -> ToolResult {
                todo_body()
            }

            /// Lists the plan.
            async fn list_todos(&self, view: &mut View) -> ToolResult {
                list_body()
            }

            fn helper(&self) -> usize { 0 }
        }

        impl PlanTools {
            #[doc(hidden)]
            fn __haico_spec_add_todos() -> &'static ::haico::tools::ToolSpec {
                #[allow(unused_imports)]
                use workspace_tool as _;
                static SPEC: ::std::sync::LazyLock<::haico::tools::ToolSpec> = ::std::sync::LazyLock::new(|| {
                    ::haico::tools::ToolSpec::for_args::<AddTodosArgs>("add_todos", "Add a whole outline")
                });
                &SPEC
            }
            #[doc(hidden)]
            fn __haico_invoke_add_todos<'a>(
                this: &'a Self,
                workspace: &'a mut ::haico::tools::__private::Edit,
                args: ::haico::tools::__private::Value,
            ) -> ::haico::tools::ToolFuture<'a> {
                ::std::boxed::Box::pin(async move {
                    let args = ::haico::tools::__private::parse_args::<AddTodosArgs>(args)?;
                    ::haico::tools::__private::IntoToolResult::into_tool_result(this.add_todos(workspace, args).await)
                })
            }
            #[doc(hidden)]
            fn __haico_spec_list_todos() -> &'static ::haico::tools::ToolSpec {
                #[allow(unused_imports)]
                use workspace_tool as _;
                static SPEC: ::std::sync::LazyLock<::haico::tools::ToolSpec> = ::std::sync::LazyLock::new(|| {
                    ::haico::tools::ToolSpec::without_args("list_todos", "List the numbered plan")
                });
                &SPEC
            }
            #[doc(hidden)]
            fn __haico_invoke_list_todos<'a>(
                this: &'a Self,
                workspace: &'a mut ::haico::tools::__private::View,
                args: ::haico::tools::__private::Value,
            ) -> ::haico::tools::ToolFuture<'a> {
                ::std::boxed::Box::pin(async move {
                    ::haico::tools::__private::parse_no_args(args)?;
                    ::haico::tools::__private::IntoToolResult::into_tool_result(this.list_todos(workspace).await)
                })
            }
        }

        impl ::haico::tools::ToolCollection for PlanTools {
            #[allow(clippy::used_underscore_items)]
            fn entries() -> &'static [::haico::tools::ToolEntry<Self>] {
                static ENTRIES: [::haico::tools::ToolEntry<PlanTools>; 2] = [
                    ::haico::tools::ToolEntry { spec: PlanTools::__haico_spec_add_todos, invoke: ::haico::tools::Invoke::Write(PlanTools::__haico_invoke_add_todos) },
                    ::haico::tools::ToolEntry { spec: PlanTools::__haico_spec_list_todos, invoke: ::haico::tools::Invoke::Read(PlanTools::__haico_invoke_list_todos) },
                ];
                &ENTRIES
            }
        }
    };
    assert_eq!(actual.items.len(), expected.items.len());
    for (actual, expected) in actual.items.iter().zip(&expected.items) {
        assert_eq!(
            actual.to_token_stream().to_string(),
            expected.to_token_stream().to_string()
        );
    }
    assert_eq!(actual, expected);
    Ok(())
}

#[test]
fn strips_tool_attributes_and_lists_entries_in_order() -> syn::Result<()> {
    let file = expand_ok(TokenStream::new(), todo_tools())?;
    let impls = impls(&file);
    assert_eq!(impls.len(), 3);

    let original = impls[0];
    assert_eq!(fn_names(original), ["add_todos", "list_todos", "helper"]);
    let leftover = original.items.iter().any(|item| match item {
        ImplItem::Fn(method) => method.attrs.iter().any(tool_attr::is_tool_attr),
        _ => false,
    });
    assert!(!leftover, "a #[workspace_tool] attribute survived");

    assert_eq!(
        fn_names(impls[1]),
        [
            "__haico_spec_add_todos",
            "__haico_invoke_add_todos",
            "__haico_spec_list_todos",
            "__haico_invoke_list_todos"
        ]
    );

    let collection = impls[2];
    let trait_path = collection
        .trait_
        .as_ref()
        .map(|(_, path, _)| path.to_token_stream().to_string());
    assert_eq!(
        trait_path.as_deref(),
        Some(":: haico :: tools :: ToolCollection")
    );
    let Some(ImplItem::Fn(entries)) = collection.items.first() else {
        return Err(Error::new(Span::call_site(), "no entries fn"));
    };
    let Some(Stmt::Item(Item::Static(ItemStatic { expr, ty, .. }))) = entries.block.stmts.first()
    else {
        return Err(Error::new(Span::call_site(), "no ENTRIES static"));
    };
    assert_eq!(
        ty.to_token_stream().to_string(),
        "[:: haico :: tools :: ToolEntry < PlanTools > ; 2]"
    );
    let syn::Expr::Array(array) = &**expr else {
        return Err(Error::new(Span::call_site(), "ENTRIES is not an array"));
    };
    let specs: Vec<String> = array
        .elems
        .iter()
        .filter_map(|elem| match elem {
            syn::Expr::Struct(entry) => entry
                .fields
                .first()
                .map(|field| field.expr.to_token_stream().to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        specs,
        [
            "PlanTools :: __haico_spec_add_todos",
            "PlanTools :: __haico_spec_list_todos"
        ]
    );
    Ok(())
}

#[test]
fn uses_a_qualified_path_for_types_with_generic_arguments() -> syn::Result<()> {
    let item = quote! {
        impl Tools<u8> {
            #[workspace_tool(name = "t", description = "d")]
            async fn t(&self, edit: &mut Edit) -> ToolResult { body() }
        }
    };
    let out = expand(TokenStream::new(), item)?.to_string();
    assert!(
        out.contains("spec : < Tools < u8 > > :: __haico_spec_t"),
        "{out}"
    );
    assert!(out.contains("ToolEntry < Tools < u8 > > ; 1"), "{out}");
    Ok(())
}

#[test]
fn copies_cfg_to_the_generated_impls() -> syn::Result<()> {
    let item = quote! {
        #[cfg(feature = "x")]
        impl Tools {
            #[workspace_tool(name = "t", description = "d")]
            async fn t(&self, edit: &mut Edit) -> ToolResult { body() }
        }
    };
    let file = expand_ok(TokenStream::new(), item)?;
    for item_impl in impls(&file) {
        assert!(
            item_impl
                .attrs
                .iter()
                .any(|attr| attr.path().is_ident("cfg"))
        );
    }
    Ok(())
}

#[test]
fn rejects_arguments_and_non_inherent_impls() {
    let message = error_of(quote!(name = "x"), todo_tools());
    assert!(
        message.contains("`#[workspace_tools]` takes no arguments"),
        "{message}"
    );

    let trait_impl = quote! {
        impl Tools for PlanTools {
            #[workspace_tool(name = "t", description = "d")]
            async fn t(&self, edit: &mut Edit) -> ToolResult { body() }
        }
    };
    let message = error_of(TokenStream::new(), trait_impl);
    assert!(message.contains("not on a trait impl"), "{message}");

    let generic = quote! {
        impl<T> PlanTools<T> {
            #[workspace_tool(name = "t", description = "d")]
            async fn t(&self, edit: &mut Edit) -> ToolResult { body() }
        }
    };
    let message = error_of(TokenStream::new(), generic);
    assert!(
        message.contains("a tool collection cannot be generic"),
        "{message}"
    );

    let message = error_of(
        TokenStream::new(),
        quote!(
            struct PlanTools;
        ),
    );
    assert!(message.contains("not on a struct"), "{message}");
}

#[test]
fn rejects_impls_without_tools() {
    let item = quote! {
        impl PlanTools {
            fn helper(&self) -> usize { 0 }
        }
    };
    let message = error_of(TokenStream::new(), item);
    assert!(message.contains("declares no tools"), "{message}");
}

#[test]
fn rejects_duplicate_names() {
    let item = quote! {
        impl PlanTools {
            #[workspace_tool(name = "list", description = "a")]
            async fn first(&self, edit: &mut Edit) -> ToolResult { body() }
            #[workspace_tool(name = "list", description = "b")]
            async fn second(&self, edit: &mut Edit) -> ToolResult { body() }
        }
    };
    let message = error_of(TokenStream::new(), item);
    assert!(
        message.contains("duplicate tool name `list`: method `first` already declares"),
        "{message}"
    );
}

#[test]
fn reports_every_bad_method_at_once() {
    let item = quote! {
        impl PlanTools {
            #[workspace_tool(name = "Bad Name", description = "a")]
            async fn first(&self, edit: &mut Edit) -> ToolResult { body() }
            #[workspace_tool(name = "second", description = "b")]
            fn second(&self, edit: &mut Edit) -> ToolResult { body() }
            #[workspace_tool(name = "third", description = "c")]
            const THIRD: u8 = 3;
            #[workspace_tool(name = "fourth", description = "d")]
            #[workspace_tool(name = "fourth", description = "d")]
            async fn fourth(&self, edit: &mut Edit) -> ToolResult { body() }
        }
    };
    let message = error_of(TokenStream::new(), item);
    assert!(
        message.contains("invalid tool name `Bad Name`"),
        "{message}"
    );
    assert!(
        message.contains("tool method `second` must be `async`"),
        "{message}"
    );
    assert!(message.contains("not on associated constants"), "{message}");
    assert!(
        message.contains("`fourth` already has a `#[workspace_tool]`"),
        "{message}"
    );
}

#[test]
fn fallback_keeps_the_impl_without_tool_attributes() {
    let out = workspace_tools(quote!(oops), todo_tools()).to_string();
    assert!(out.contains("compile_error"), "{out}");
    assert!(out.contains("async fn add_todos"), "{out}");
    assert!(!out.contains("workspace_tool ("), "{out}");
    assert!(out.contains("use workspace_tool as _ ;"), "{out}");
}
