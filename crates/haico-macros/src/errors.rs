//! Collects several `syn::Error`s so one expansion can report every problem at once.

/// An accumulator of compile errors; empty until the first [`Errors::push`].
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    /// Adds an error to the list.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(first) => first.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Adds the error of `result`, if any, and returns its value otherwise.
    pub(crate) fn keep<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.push(error);
                None
            }
        }
    }

    /// `Ok(())` when nothing was pushed, otherwise every pushed error combined.
    pub(crate) fn finish(self) -> syn::Result<()> {
        match self.0 {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}
