//! `#[workspace_tools]`: validates an inherent impl block, strips the `#[workspace_tool]`
//! attributes from it and generates the spec/invoke glue plus the `ToolCollection` impl.

use std::collections::HashMap;

use proc_macro2::{Literal, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::{Attribute, Error, Ident, ImplItem, Item, ItemImpl, Path, Type, spanned::Spanned};

use crate::{
    errors::Errors,
    signature::{self, ToolSignature},
    tool_attr::{self, ToolAttr, USAGE},
};

/// One validated tool method.
struct Tool {
    /// The path the `#[workspace_tool]` attribute was written with, e.g. `workspace_tool`.
    attr_path: Path,
    attr: ToolAttr,
    sig: ToolSignature,
}

/// Entry point: the expansion, or on failure the errors plus the impl block without its
/// `#[workspace_tool]` attributes (so the methods still exist and no follow-up errors appear).
pub(crate) fn workspace_tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr, item.clone()) {
        Ok(tokens) => tokens,
        Err(error) => {
            let mut out = error.to_compile_error();
            out.extend(fallback(item));
            out
        }
    }
}

/// Expands `#[workspace_tools]` with arguments `attr` on `item`.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    if !attr.is_empty() {
        errors.push(Error::new_spanned(
            &attr,
            format!(
                "`#[workspace_tools]` takes no arguments; give each tool method its own {USAGE}"
            ),
        ));
    }
    let parsed = inherent_impl(item);
    let mut item_impl = match (errors.finish(), parsed) {
        (Ok(()), Ok(item_impl)) => item_impl,
        (Err(mut error), Err(more)) => {
            error.combine(more);
            return Err(error);
        }
        (Err(error), Ok(_)) | (Ok(()), Err(error)) => return Err(error),
    };

    let tools = collect_tools(&mut item_impl)?;
    Ok(generate(&item_impl, &tools))
}

/// Parses `item` and checks that it is a non-generic inherent impl block.
fn inherent_impl(item: TokenStream) -> syn::Result<ItemImpl> {
    let item: Item = syn::parse2(item).map_err(|error| {
        Error::new(
            error.span(),
            format!("`#[workspace_tools]` goes on an inherent impl block, like `impl PlanTools {{ ... }}`: {error}"),
        )
    })?;
    let item_impl = match item {
        Item::Impl(item_impl) => item_impl,
        other => {
            let (span, what) = describe(&other);
            return Err(Error::new(
                span,
                format!(
                    "`#[workspace_tools]` goes on an inherent impl block, like `impl PlanTools {{ \
                     ... }}`, not on {what}; put the tool methods in an `impl` block of the \
                     collection struct and mark that block"
                ),
            ));
        }
    };

    let mut errors = Errors::default();
    if let Some((_, path, for_token)) = &item_impl.trait_ {
        errors.push(Error::new_spanned(
            quote!(#path #for_token),
            format!(
                "`#[workspace_tools]` goes on an inherent impl block, like `impl {} {{ ... }}`, \
                 not on a trait impl: it implements `ToolCollection` for the type itself",
                item_impl.self_ty.to_token_stream()
            ),
        ));
    }
    let generic_tokens = if item_impl.generics.params.is_empty() {
        item_impl.generics.where_clause.to_token_stream()
    } else {
        item_impl.generics.to_token_stream()
    };
    if !generic_tokens.is_empty() {
        errors.push(Error::new_spanned(
            generic_tokens,
            "a tool collection cannot be generic: its tool table is a `static`, which cannot \
             depend on the impl's type or lifetime parameters; mark an impl block of a concrete \
             type instead",
        ));
    }
    errors.finish()?;
    Ok(item_impl)
}

/// A span and a description of an item that is not an impl block.
fn describe(item: &Item) -> (Span, &'static str) {
    match item {
        Item::Struct(item) => (item.ident.span(), "a struct"),
        Item::Enum(item) => (item.ident.span(), "an enum"),
        Item::Union(item) => (item.ident.span(), "a union"),
        Item::Fn(item) => (item.sig.ident.span(), "a function"),
        Item::Trait(item) => (item.ident.span(), "a trait"),
        Item::Mod(item) => (item.ident.span(), "a module"),
        Item::Type(item) => (item.ident.span(), "a type alias"),
        Item::Const(item) => (item.ident.span(), "a constant"),
        Item::Static(item) => (item.ident.span(), "a static"),
        other => (other.span(), "this item"),
    }
}

/// Strips every `#[workspace_tool]` from the impl's items and validates the marked methods.
fn collect_tools(item_impl: &mut ItemImpl) -> syn::Result<Vec<Tool>> {
    let mut errors = Errors::default();
    let mut tools = Vec::new();
    let mut marked = 0_usize;

    for item in &mut item_impl.items {
        let ImplItem::Fn(method) = item else {
            let (attrs, what) = match item {
                ImplItem::Const(item) => (&mut item.attrs, "associated constants"),
                ImplItem::Type(item) => (&mut item.attrs, "associated types"),
                ImplItem::Macro(item) => (&mut item.attrs, "macro invocations"),
                _ => continue,
            };
            for attr in take_tool_attrs(attrs) {
                marked += 1;
                errors.push(Error::new_spanned(
                    attr,
                    format!("`#[workspace_tool]` goes on `async fn` methods, not on {what}"),
                ));
            }
            continue;
        };

        let tool_attrs = take_tool_attrs(&mut method.attrs);
        let Some((first, extra)) = tool_attrs.split_first() else {
            continue;
        };
        marked += 1;
        for attr in extra {
            errors.push(Error::new_spanned(
                attr,
                format!(
                    "`{}` already has a `#[workspace_tool]`: each method declares exactly one \
                     tool",
                    method.sig.ident
                ),
            ));
        }
        let attr = errors.keep(tool_attr::parse(first));
        let sig = errors.keep(signature::analyze(&method.sig));
        if let (Some(attr), Some(sig)) = (attr, sig) {
            errors.keep(signature::check_handle(&sig, attr.read_only));
            tools.push(Tool {
                attr_path: first.path().clone(),
                attr,
                sig,
            });
        }
    }

    let mut seen: HashMap<String, &Ident> = HashMap::new();
    for tool in &tools {
        let name = tool.attr.name.value();
        if let Some(first) = seen.get(&name) {
            errors.push(Error::new(
                tool.attr.name.span(),
                format!(
                    "duplicate tool name `{name}`: method `{first}` already declares a tool with \
                     this name; tool names must be unique within a collection"
                ),
            ));
        } else {
            seen.insert(name, &tool.sig.method);
        }
    }

    if marked == 0 {
        errors.push(Error::new_spanned(
            &item_impl.self_ty,
            format!(
                "this `#[workspace_tools]` impl block declares no tools: mark at least one \
                 `async fn` method with {USAGE}"
            ),
        ));
    }

    errors.finish()?;
    Ok(tools)
}

/// Removes and returns the `#[workspace_tool]` attributes of `attrs`.
fn take_tool_attrs(attrs: &mut Vec<Attribute>) -> Vec<Attribute> {
    let (tool, other): (Vec<_>, Vec<_>) = std::mem::take(attrs)
        .into_iter()
        .partition(tool_attr::is_tool_attr);
    *attrs = other;
    tool
}

/// The cleaned impl block, the glue impl block and the `ToolCollection` impl.
fn generate(item_impl: &ItemImpl, tools: &[Tool]) -> TokenStream {
    let self_ty = &item_impl.self_ty;
    let cfgs: Vec<&Attribute> = item_impl
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg"))
        .collect();
    let glue = tools.iter().map(glue_fns);
    let ty_path = qualified(self_ty);
    let entries = tools.iter().map(|tool| {
        let (spec_fn, invoke_fn) = glue_names(&tool.sig.method);
        let kind = if tool.attr.read_only {
            quote!(Read)
        } else {
            quote!(Write)
        };
        quote! {
            ::haico::tools::ToolEntry {
                spec: #ty_path::#spec_fn,
                invoke: ::haico::tools::Invoke::#kind(#ty_path::#invoke_fn)
            }
        }
    });
    let count = Literal::usize_unsuffixed(tools.len());

    quote! {
        #item_impl

        #(#cfgs)*
        impl #self_ty {
            #(#glue)*
        }

        #(#cfgs)*
        impl ::haico::tools::ToolCollection for #self_ty {
            #[allow(clippy::used_underscore_items)]
            fn entries() -> &'static [::haico::tools::ToolEntry<Self>] {
                static ENTRIES: [::haico::tools::ToolEntry<#self_ty>; #count] = [
                    #(#entries,)*
                ];
                &ENTRIES
            }
        }
    }
}

/// The self type as the start of an expression path: `PlanTools` stays as is, anything with
/// generic arguments or other syntax becomes `<Type>`.
fn qualified(ty: &Type) -> TokenStream {
    match ty {
        Type::Path(path)
            if path.qself.is_none()
                && path
                    .path
                    .segments
                    .iter()
                    .all(|segment| segment.arguments.is_none()) =>
        {
            path.to_token_stream()
        }
        other => quote!(<#other>),
    }
}

/// The names of a tool's generated spec and invoke functions.
fn glue_names(method: &Ident) -> (Ident, Ident) {
    (
        format_ident!("__haico_spec_{}", method),
        format_ident!("__haico_invoke_{}", method),
    )
}

/// The spec and invoke functions of one tool.
fn glue_fns(tool: &Tool) -> TokenStream {
    let ToolAttr {
        name, description, ..
    } = &tool.attr;
    let ToolSignature {
        method,
        args_ty,
        output_span,
        ..
    } = &tool.sig;
    let (spec_fn, invoke_fn) = glue_names(method);
    // Call-site hygiene, but errors about the call point at the method / its return type.
    let call_span = Span::call_site().located_at(method.span());
    let output_span = Span::call_site().located_at(*output_span);

    let (spec, parse, call) = match args_ty {
        Some(args_ty) => (
            quote!(::haico::tools::ToolSpec::for_args::<#args_ty>(#name, #description)),
            quote!(let args = ::haico::tools::__private::parse_args::<#args_ty>(args)?;),
            quote_spanned!(call_span=> this.#method(workspace, args).await),
        ),
        None => (
            quote!(::haico::tools::ToolSpec::without_args(#name, #description)),
            quote!(::haico::tools::__private::parse_no_args(args)?;),
            quote_spanned!(call_span=> this.#method(workspace).await),
        ),
    };
    // A read-only tool gets a view (a read snapshot), any other an edit of its thread.
    let handle = if tool.attr.read_only {
        quote!(::haico::tools::__private::View)
    } else {
        quote!(::haico::tools::__private::Edit)
    };
    let convert =
        quote_spanned!(output_span=> ::haico::tools::__private::IntoToolResult::into_tool_result);

    let attr_path = &tool.attr_path;
    quote! {
        #[doc(hidden)]
        fn #spec_fn() -> &'static ::haico::tools::ToolSpec {
            // The `#[workspace_tool]` attribute was stripped before it could resolve; naming its
            // path here keeps the caller's import of it from being reported as unused.
            #[allow(unused_imports)]
            use #attr_path as _;
            static SPEC: ::std::sync::LazyLock<::haico::tools::ToolSpec> =
                ::std::sync::LazyLock::new(|| { #spec });
            &SPEC
        }

        #[doc(hidden)]
        fn #invoke_fn<'a>(
            this: &'a Self,
            workspace: &'a mut #handle,
            args: ::haico::tools::__private::Value,
        ) -> ::haico::tools::ToolFuture<'a> {
            ::std::boxed::Box::pin(async move {
                #parse
                #convert(#call)
            })
        }
    }
}

/// What `#[workspace_tools]` emits next to its errors: the item with every `#[workspace_tool]`
/// removed (so those do not report a second, misleading error), or the item unchanged.
fn fallback(item: TokenStream) -> TokenStream {
    let Ok(mut item_impl) = syn::parse2::<ItemImpl>(item.clone()) else {
        return item;
    };
    let mut stripped = Vec::new();
    for item in &mut item_impl.items {
        let attrs = match item {
            ImplItem::Fn(item) => &mut item.attrs,
            ImplItem::Const(item) => &mut item.attrs,
            ImplItem::Type(item) => &mut item.attrs,
            ImplItem::Macro(item) => &mut item.attrs,
            _ => continue,
        };
        stripped.extend(take_tool_attrs(attrs));
    }
    // As in the spec functions of a successful expansion: keep the caller's import of the
    // stripped attribute in use, so the errors are not followed by an unused-import warning.
    let mut paths: Vec<&Path> = stripped.iter().map(Attribute::path).collect();
    paths.sort_by_cached_key(|path| path.to_token_stream().to_string());
    paths.dedup_by_key(|path| path.to_token_stream().to_string());
    let marker = (!paths.is_empty()).then(|| {
        quote! {
            const _: () = {
                #(
                    #[allow(unused_imports)]
                    use #paths as _;
                )*
            };
        }
    });
    quote!(#item_impl #marker)
}

#[cfg(test)]
mod tests;
