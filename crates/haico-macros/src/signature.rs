//! Checks that a `#[workspace_tool]` method has one of the two supported shapes and extracts
//! what the generated glue needs from it.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::{
    Error, FnArg, GenericParam, Ident, PatType, Receiver, ReturnType, Signature, Type,
    spanned::Spanned,
};

use crate::errors::Errors;

/// The two method shapes a tool can have, quoted in error messages.
const SHAPES: &str = "expected `(&self, edit: &mut Edit)` or `(&self, edit: &mut Edit, args: \
                      YourArgs)` (a `read_only` tool takes `view: &mut View` instead)";

/// What the glue of one tool needs to know about its method.
#[derive(Debug, Clone)]
pub(crate) struct ToolSignature {
    /// The method's name.
    pub(crate) method: Ident,
    /// The type of the argument struct, as written, or `None` for a tool without arguments.
    pub(crate) args_ty: Option<Type>,
    /// The name of the workspace handle's type as written (`Edit`, `View`, …), when the method
    /// has one.
    pub(crate) handle: Option<Ident>,
    /// Where the return type is written, so conversion errors point at it.
    pub(crate) output_span: Span,
}

/// Validates a tool method's signature, reporting every problem at once.
pub(crate) fn analyze(sig: &Signature) -> syn::Result<ToolSignature> {
    let method = &sig.ident;
    let parens = sig.paren_token.span.join();
    let mut errors = Errors::default();

    if sig.asyncness.is_none() {
        errors.push(Error::new_spanned(
            sig.fn_token,
            format!("tool method `{method}` must be `async`: write `async fn {method}(...)`"),
        ));
    }

    if let Some(param) = sig
        .generics
        .params
        .iter()
        .find(|param| !matches!(param, GenericParam::Lifetime(_)))
    {
        errors.push(Error::new_spanned(
            param,
            format!(
                "tool method `{method}` cannot have type or const parameters: the generated glue \
                 calls it with the concrete argument type"
            ),
        ));
    }

    match sig.inputs.first() {
        Some(FnArg::Receiver(receiver)) => errors.keep(check_receiver(receiver, method)),
        _ => {
            errors.push(Error::new(
                parens,
                format!("tool method `{method}` needs a `&self` receiver: {SHAPES}"),
            ));
            None
        }
    };

    let params: Vec<&PatType> = sig
        .inputs
        .iter()
        .filter_map(|arg| match arg {
            FnArg::Typed(param) => Some(param),
            FnArg::Receiver(_) => None,
        })
        .collect();
    let args_ty = match params.as_slice() {
        [] => {
            errors.push(Error::new(
                parens,
                format!(
                    "tool method `{method}` takes nothing besides `&self`, but every tool \
                     receives its workspace: {SHAPES}"
                ),
            ));
            None
        }
        [workspace] => {
            errors.keep(check_workspace(workspace));
            None
        }
        [workspace, args] => {
            errors.keep(check_workspace(workspace));
            errors.keep(check_args(args)).map(|()| (*args.ty).clone())
        }
        [_, _, extra @ ..] => {
            let count = params.len();
            errors.push(Error::new_spanned(
                quote!(#(#extra),*),
                format!(
                    "tool method `{method}` has {count} parameters after `&self`: {SHAPES}\n  \
                     = help: put every input of the tool into one args struct deriving \
                     `serde::Deserialize` and `schemars::JsonSchema`"
                ),
            ));
            None
        }
    };

    let output_span = match &sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => {
            errors.push(Error::new(
                sig.paren_token.span.close(),
                format!(
                    "tool method `{method}` has no return type: it must return `ToolResult` or \
                     `Result<String, ToolError>`"
                ),
            ));
            parens
        }
    };

    errors.finish()?;
    Ok(ToolSignature {
        method: method.clone(),
        args_ty,
        handle: params.first().and_then(|param| handle_name(&param.ty)),
        output_span,
    })
}

/// The receiver must be `&self`: the runtime only holds a shared reference to the collection.
fn check_receiver(receiver: &Receiver, method: &Ident) -> syn::Result<()> {
    match &*receiver.ty {
        Type::Reference(reference) if reference.mutability.is_none() => Ok(()),
        Type::Reference(_) => Err(Error::new_spanned(
            receiver,
            format!(
                "tool method `{method}` must take `&self`, not `&mut self`: the runtime shares one \
                 collection value between calls; keep changing state in the workspace, through \
                 `edit`"
            ),
        )),
        _ => Err(Error::new_spanned(
            receiver,
            format!(
                "tool method `{method}` must take `&self`, not `self` by value: the runtime shares \
                 one collection value between calls"
            ),
        )),
    }
}

/// The parameter after `&self` receives the call's workspace: `&mut Edit`, or `&mut View` for
/// a `read_only` tool. Only the `&mut` is checked here; the compiler checks the type against
/// the generated call.
fn check_workspace(workspace: &PatType) -> syn::Result<()> {
    match &*workspace.ty {
        Type::Reference(reference) if reference.mutability.is_some() => Ok(()),
        _ => Err(Error::new_spanned(
            &workspace.ty,
            "the first parameter after `&self` receives the call's workspace and must be \
             `edit: &mut Edit` (or `view: &mut View` for a `read_only` tool)",
        )),
    }
}

/// The last segment of the type behind a `&mut` (`Edit` in `&mut haico::workspace::Edit`).
fn handle_name(ty: &Type) -> Option<Ident> {
    match ty {
        Type::Reference(reference) => match &*reference.elem {
            Type::Path(path) => path.path.segments.last().map(|s| s.ident.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// A tool's declaration and its workspace handle must agree: a `read_only` tool runs on a
/// read snapshot and gets a `View`; any other gets an `Edit`. Types named otherwise (aliases)
/// are left to the compiler.
pub(crate) fn check_handle(sig: &ToolSignature, read_only: bool) -> syn::Result<()> {
    let Some(handle) = &sig.handle else {
        return Ok(());
    };
    let method = &sig.method;
    match (read_only, handle.to_string().as_str()) {
        (true, "Edit") => Err(Error::new(
            handle.span(),
            format!(
                "tool `{method}` is declared `read_only`, so it runs on a read snapshot: take \
                 `view: &mut View`, or drop `read_only` if it writes"
            ),
        )),
        (false, "View") => Err(Error::new(
            handle.span(),
            format!(
                "tool `{method}` takes a `View`, which cannot write: declare it \
                 `#[workspace_tool(read_only, ...)]`, or take `edit: &mut Edit`"
            ),
        )),
        _ => Ok(()),
    }
}

/// The args parameter is deserialized from the model's JSON and described by a `static` spec,
/// so it must be an owned, nameable type.
fn check_args(args: &PatType) -> syn::Result<()> {
    let hint = "the args parameter must be an owned struct deriving `serde::Deserialize` and \
                `schemars::JsonSchema`";
    match &*args.ty {
        Type::Reference(reference) => {
            let inner = &reference.elem;
            Err(Error::new_spanned(
                &args.ty,
                format!(
                    "{hint}; take it by value, e.g. `args: {}`",
                    inner.to_token_stream()
                ),
            ))
        }
        Type::ImplTrait(_) | Type::Infer(_) | Type::Never(_) => {
            Err(Error::new_spanned(&args.ty, hint))
        }
        ty if mentions_self(ty.to_token_stream()) => Err(Error::new_spanned(
            &args.ty,
            "spell out the args type instead of using `Self`: the generated tool spec names it \
             inside a `static`, where `Self` is not available",
        )),
        _ => Ok(()),
    }
}

fn mentions_self(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|token| match token {
        TokenTree::Ident(ident) => ident == "Self",
        TokenTree::Group(group) => mentions_self(group.stream()),
        TokenTree::Punct(_) | TokenTree::Literal(_) => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn error_of(sig: &Signature) -> String {
        match analyze(sig) {
            Ok(parsed) => format!("unexpectedly accepted {parsed:?}"),
            Err(error) => error
                .into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(" | "),
        }
    }

    #[test]
    fn accepts_both_shapes() -> syn::Result<()> {
        let with_args: Signature = parse_quote!(
            async fn add_todos(&self, edit: &mut Edit, args: AddTodosArgs) -> ToolResult
        );
        let parsed = analyze(&with_args)?;
        assert_eq!(parsed.method, "add_todos");
        let expected: Type = parse_quote!(AddTodosArgs);
        assert_eq!(parsed.args_ty, Some(expected));

        let without: Signature = parse_quote!(
            async fn list_todos(&self, edit: &mut Edit) -> Result<String, ToolError>
        );
        assert_eq!(analyze(&without)?.args_ty, None);

        let lifetimes: Signature = parse_quote!(
            async fn list<'r>(&'r self, _edit: &'r mut Edit, Args { a }: Args) -> ToolResult
        );
        assert!(analyze(&lifetimes)?.args_ty.is_some());
        Ok(())
    }

    #[test]
    fn rejects_sync_methods() {
        let sig: Signature = parse_quote!(fn list(&self, edit: &mut Edit) -> ToolResult);
        assert!(error_of(&sig).contains("tool method `list` must be `async`"));
    }

    #[test]
    fn rejects_other_receivers() {
        let by_value: Signature = parse_quote!(async fn list(self, edit: &mut Edit) -> ToolResult);
        assert!(error_of(&by_value).contains("not `self` by value"));

        let by_mut: Signature =
            parse_quote!(async fn list(&mut self, edit: &mut Edit) -> ToolResult);
        assert!(error_of(&by_mut).contains("not `&mut self`"));

        let none: Signature = parse_quote!(async fn list(edit: &mut Edit) -> ToolResult);
        let message = error_of(&none);
        assert!(message.contains("needs a `&self` receiver"), "{message}");
    }

    #[test]
    fn rejects_wrong_parameter_counts() {
        let none: Signature = parse_quote!(async fn list(&self) -> ToolResult);
        let message = error_of(&none);
        assert!(
            message.contains("takes nothing besides `&self`"),
            "{message}"
        );
        assert!(message.contains("(&self, edit: &mut Edit)"), "{message}");

        let many: Signature = parse_quote!(
            async fn list(&self, edit: &mut Edit, a: A, b: B) -> ToolResult
        );
        assert!(error_of(&many).contains("has 3 parameters after `&self`"));
    }

    #[test]
    fn rejects_bad_workspace_and_args_types() {
        let shared_edit: Signature = parse_quote!(async fn list(&self, edit: &Edit) -> ToolResult);
        assert!(error_of(&shared_edit).contains("must be `edit: &mut Edit`"));

        let borrowed: Signature =
            parse_quote!(async fn add(&self, edit: &mut Edit, args: &Args) -> ToolResult);
        assert!(error_of(&borrowed).contains("take it by value, e.g. `args: Args`"));

        let self_args: Signature = parse_quote!(
            async fn add(&self, edit: &mut Edit, args: Vec<Self>) -> ToolResult
        );
        assert!(error_of(&self_args).contains("instead of using `Self`"));
    }

    #[test]
    fn the_handle_matches_the_declaration() -> syn::Result<()> {
        let edit: Signature = parse_quote!(async fn peek(&self, e: &mut Edit) -> ToolResult);
        let view: Signature =
            parse_quote!(async fn peek(&self, v: &mut haico::workspace::View) -> ToolResult);
        let alias: Signature = parse_quote!(async fn peek(&self, w: &mut Handle) -> ToolResult);
        let (edit, view, alias) = (analyze(&edit)?, analyze(&view)?, analyze(&alias)?);
        assert!(check_handle(&edit, false).is_ok());
        assert!(check_handle(&view, true).is_ok());
        assert!(check_handle(&alias, true).is_ok() && check_handle(&alias, false).is_ok());
        let read_only_edit = check_handle(&edit, true).map_err(|e| e.to_string());
        assert!(
            read_only_edit
                .as_ref()
                .is_err_and(|e| e.contains("take `view: &mut View`")),
            "{read_only_edit:?}"
        );
        let writing_view = check_handle(&view, false).map_err(|e| e.to_string());
        assert!(
            writing_view
                .as_ref()
                .is_err_and(|e| e.contains("declare it `#[workspace_tool(read_only, ...)]`")),
            "{writing_view:?}"
        );
        Ok(())
    }

    #[test]
    fn requires_a_return_type_and_reports_everything() {
        let sig: Signature = parse_quote!(fn list(&mut self));
        let message = error_of(&sig);
        assert!(message.contains("must be `async`"), "{message}");
        assert!(message.contains("not `&mut self`"), "{message}");
        assert!(
            message.contains("takes nothing besides `&self`"),
            "{message}"
        );
        assert!(message.contains("has no return type"), "{message}");
        assert!(message.contains("`Result<String, ToolError>`"), "{message}");
    }
}
