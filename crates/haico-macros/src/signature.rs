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
const SHAPES: &str = "expected `(&self, repo: &mut WorkspaceRepository)` or `(&self, repo: &mut \
                      WorkspaceRepository, args: YourArgs)`";

/// What the glue of one tool needs to know about its method.
#[derive(Debug, Clone)]
pub(crate) struct ToolSignature {
    /// The method's name.
    pub(crate) method: Ident,
    /// The type of the argument struct, as written, or `None` for a tool without arguments.
    pub(crate) args_ty: Option<Type>,
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
                     receives the workspace repository: {SHAPES}"
                ),
            ));
            None
        }
        [repo] => {
            errors.keep(check_repo(repo));
            None
        }
        [repo, args] => {
            errors.keep(check_repo(repo));
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
                 `repo`"
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

/// The parameter after `&self` receives the call's `&mut WorkspaceRepository`. Only the
/// `&mut` is checked here; the compiler checks the rest against the generated call.
fn check_repo(repo: &PatType) -> syn::Result<()> {
    match &*repo.ty {
        Type::Reference(reference) if reference.mutability.is_some() => Ok(()),
        _ => Err(Error::new_spanned(
            &repo.ty,
            "the first parameter after `&self` receives the workspace repository and must be \
             `repo: &mut WorkspaceRepository`",
        )),
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
            async fn add_todos(&self, repo: &mut WorkspaceRepository, args: AddTodosArgs) -> ToolResult
        );
        let parsed = analyze(&with_args)?;
        assert_eq!(parsed.method, "add_todos");
        let expected: Type = parse_quote!(AddTodosArgs);
        assert_eq!(parsed.args_ty, Some(expected));

        let without: Signature = parse_quote!(
            async fn list_todos(&self, repo: &mut WorkspaceRepository) -> Result<String, ToolError>
        );
        assert_eq!(analyze(&without)?.args_ty, None);

        let lifetimes: Signature = parse_quote!(
            async fn list<'r>(&'r self, _repo: &'r mut WorkspaceRepository, Args { a }: Args) -> ToolResult
        );
        assert!(analyze(&lifetimes)?.args_ty.is_some());
        Ok(())
    }

    #[test]
    fn rejects_sync_methods() {
        let sig: Signature =
            parse_quote!(fn list(&self, repo: &mut WorkspaceRepository) -> ToolResult);
        assert!(error_of(&sig).contains("tool method `list` must be `async`"));
    }

    #[test]
    fn rejects_other_receivers() {
        let by_value: Signature =
            parse_quote!(async fn list(self, repo: &mut WorkspaceRepository) -> ToolResult);
        assert!(error_of(&by_value).contains("not `self` by value"));

        let by_mut: Signature =
            parse_quote!(async fn list(&mut self, repo: &mut WorkspaceRepository) -> ToolResult);
        assert!(error_of(&by_mut).contains("not `&mut self`"));

        let none: Signature =
            parse_quote!(async fn list(repo: &mut WorkspaceRepository) -> ToolResult);
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
        assert!(
            message.contains("(&self, repo: &mut WorkspaceRepository)"),
            "{message}"
        );

        let many: Signature = parse_quote!(
            async fn list(&self, repo: &mut WorkspaceRepository, a: A, b: B) -> ToolResult
        );
        assert!(error_of(&many).contains("has 3 parameters after `&self`"));
    }

    #[test]
    fn rejects_bad_repo_and_args_types() {
        let shared_repo: Signature =
            parse_quote!(async fn list(&self, repo: &WorkspaceRepository) -> ToolResult);
        assert!(error_of(&shared_repo).contains("must be `repo: &mut WorkspaceRepository`"));

        let borrowed: Signature = parse_quote!(async fn add(&self, repo: &mut WorkspaceRepository, args: &Args) -> ToolResult);
        assert!(error_of(&borrowed).contains("take it by value, e.g. `args: Args`"));

        let self_args: Signature = parse_quote!(
            async fn add(&self, repo: &mut WorkspaceRepository, args: Vec<Self>) -> ToolResult
        );
        assert!(error_of(&self_args).contains("instead of using `Self`"));
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
