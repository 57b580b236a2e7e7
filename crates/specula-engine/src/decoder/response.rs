//! Checking the models' responses against what was asked, learning the vocabulary from
//! the first, and turning a draft row into the conditional the draft tree grows from.

use specula_core::{Distribution, SamplingConfig};

use super::Decoder;
use crate::error::{Error, Result};
use crate::request::{ForwardResponse, Role};

impl Decoder {
    /// Checks a response's shape, learning the vocabulary from the first one.
    pub(super) fn check_response(
        &mut self,
        role: Role,
        response: &ForwardResponse,
        queries: usize,
    ) -> Result<()> {
        let vocab = response.vocab;
        if vocab == 0 {
            return Err(Error::ZeroVocab { role });
        }
        if u32::try_from(vocab - 1).is_err() {
            return Err(Error::VocabTooLarge { role, vocab });
        }
        let expected = queries.checked_mul(vocab);
        if expected != Some(response.logits.len()) {
            return Err(Error::WrongResponseLength {
                role,
                queries,
                vocab,
                expected: expected.unwrap_or(usize::MAX),
                got: response.logits.len(),
            });
        }
        self.learn_vocab(role, vocab)
    }

    /// Declares the vocabulary size before any response (the driver does this with the
    /// models' sizes), so a prompt token outside it is refused before any model runs.
    /// Responses are checked against it.
    ///
    /// # Errors
    /// [`Error::ZeroVocab`], [`Error::VocabTooLarge`], [`Error::TokenOutOfRange`] for a
    /// prompt token, [`Error::TokenTextLength`], and [`Error::VocabMismatch`] when a
    /// different size is already known.
    pub fn set_vocab_size(&mut self, vocab: usize) -> Result<()> {
        if vocab == 0 {
            return Err(Error::ZeroVocab { role: Role::Target });
        }
        if u32::try_from(vocab - 1).is_err() {
            return Err(Error::VocabTooLarge {
                role: Role::Target,
                vocab,
            });
        }
        self.learn_vocab(Role::Target, vocab)
    }

    pub(super) fn learn_vocab(&mut self, role: Role, vocab: usize) -> Result<()> {
        match self.vocab {
            Some(known) if known != vocab => Err(match role {
                Role::Draft => Error::VocabMismatch {
                    draft: vocab,
                    target: known,
                },
                Role::Target => Error::VocabMismatch {
                    draft: known,
                    target: vocab,
                },
            }),
            Some(_) => Ok(()),
            None => {
                if let Some(&token) = self.tokens.iter().find(|&&t| t as usize >= vocab) {
                    return Err(Error::TokenOutOfRange { token, vocab });
                }
                self.stopper.check_vocab(vocab)?;
                self.vocab = Some(vocab);
                Ok(())
            }
        }
    }

    /// The draft conditional of one response row, and what a decoder with the
    /// filtered-draft bug tests its draws against instead (`None` when correct).
    pub(super) fn draft_conditional(
        &self,
        response: &ForwardResponse,
        row: usize,
    ) -> Result<(Distribution, Option<Distribution>)> {
        let logits = response.row(row).unwrap_or_default();
        let convert = |sampling: SamplingConfig| {
            Distribution::from_logits(logits, &sampling).map_err(|source| Error::InvalidLogits {
                role: Role::Draft,
                row,
                source,
            })
        };
        let sampling = self.config.sampling();
        let tested = match self
            .config
            .bug()
            .map(|bug| bug.tested_draft_sampling(&sampling))
        {
            Some(tested) if tested != sampling => Some(convert(tested)?),
            _ => None,
        };
        Ok((convert(sampling)?, tested))
    }
}
