//! `plan()`: the token-level closed-form analysis, no models needed. The report is the
//! one `specula plan --json` prints ([`specula_core::report`]); only the key style differs
//! (camelCase, like every object this package returns). The input rules are the CLI's,
//! worded for JavaScript options instead of flags.

use specula_core::{
    Bug, OTM_MAX_VARIABLES, PlanBug, PlanError, PlanInput, PlanMethod, PlanParams, PlanReport,
    PlanSide,
};

use crate::error::{Result, WasmError};
use specula_engine::options::{sampling, show_number, whole_usize as whole};

/// The option names `plan` accepts.
pub const PLAN_KEYS: [&str; 11] = [
    "method",
    "target",
    "draft",
    "drafts",
    "kl",
    "rho",
    "normalize",
    "bug",
    "temperature",
    "topK",
    "topP",
];

/// The most drafts (as the CLI's `--drafts`).
pub const MAX_PLAN_DRAFTS: usize = 1_000_000;
/// The default number of drafts for the multi-draft methods (as the CLI).
pub const DEFAULT_PLAN_DRAFTS: usize = 2;

/// `plan` options as given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanOptions {
    /// One of the [`PlanMethod`] names.
    pub method: Option<String>,
    /// Target probabilities.
    pub target: Option<Vec<f64>>,
    /// Draft probabilities.
    pub draft: Option<Vec<f64>>,
    /// k, for kseq, multiround, otm and race (default 2).
    pub drafts: Option<f64>,
    /// The KL budget D, for mentored (required there).
    pub kl: Option<f64>,
    /// A ρ ≥ ρ* for kseq.
    pub rho: Option<f64>,
    /// Rescale the inputs to sum to 1.
    pub normalize: Option<bool>,
    /// A deliberate bug to plant (speculative only): its kebab-case name.
    pub bug: Option<String>,
    /// With `bug`: temperature applied to both distributions (default 1).
    pub temperature: Option<f64>,
    /// With `bug`: top-k applied to both distributions.
    pub top_k: Option<f64>,
    /// With `bug`: top-p applied to both distributions.
    pub top_p: Option<f64>,
}

impl PlanOptions {
    /// Checks the options as `specula plan` checks its flags.
    ///
    /// # Errors
    /// [`WasmError::InvalidOption`] naming the first bad option.
    pub fn input(&self) -> Result<PlanInput> {
        let names: Vec<&str> = PlanMethod::ALL.iter().map(|m| m.name()).collect();
        let method = match self.method.as_deref() {
            Some(name) => PlanMethod::from_name(name).ok_or_else(|| {
                WasmError::option(format!(
                    "unknown method {name:?}; use one of: {}",
                    names.join(", ")
                ))
            })?,
            None => {
                return Err(WasmError::option(format!(
                    "method is required: one of {}",
                    names.join(", ")
                )));
            }
        };
        let target = self
            .target
            .clone()
            .ok_or_else(|| WasmError::option("target is required: the target probabilities"))?;
        let draft = self
            .draft
            .clone()
            .ok_or_else(|| WasmError::option("draft is required: the draft probabilities"))?;
        for (name, values) in [("target", &target), ("draft", &draft)] {
            if values.len() > specula_core::report::MAX_PLAN_VOCAB {
                return Err(WasmError::option(format!(
                    "{name} has {} entries; the limit is {}",
                    values.len(),
                    specula_core::report::MAX_PLAN_VOCAB
                )));
            }
        }
        if target.len() != draft.len() {
            return Err(WasmError::option(format!(
                "target has {} entries but draft has {}; both must cover the same vocabulary",
                target.len(),
                draft.len()
            )));
        }
        refuse_if_given(
            method,
            "drafts",
            self.drafts,
            method.takes_drafts(),
            "kseq, multiround, otm and race",
        )?;
        refuse_if_given(method, "rho", self.rho, method == PlanMethod::Kseq, "kseq")?;
        refuse_if_given(
            method,
            "kl",
            self.kl,
            method == PlanMethod::Mentored,
            "mentored",
        )?;
        let k = match self.drafts {
            Some(k) => whole("drafts", k, 1, MAX_PLAN_DRAFTS, "")?,
            None => DEFAULT_PLAN_DRAFTS,
        };
        let params = match method {
            PlanMethod::Speculative | PlanMethod::Greedy => PlanParams::None,
            PlanMethod::Kseq => PlanParams::KSeq {
                k,
                rho: match self.rho {
                    Some(r) if !r.is_finite() => {
                        return Err(WasmError::option(format!(
                            "rho must be a finite number >= rho* (at least 1), got {}",
                            show_number(r)
                        )));
                    }
                    r => r,
                },
            },
            PlanMethod::Multiround | PlanMethod::Otm | PlanMethod::Race => PlanParams::Drafts(k),
            PlanMethod::Mentored => match self.kl {
                Some(d) if d.is_finite() && d >= 0.0 => PlanParams::Kl(d),
                Some(d) => {
                    return Err(WasmError::option(format!(
                        "kl must be a finite number >= 0 (nats), got {}",
                        show_number(d)
                    )));
                }
                None => {
                    return Err(WasmError::option(
                        "method \"mentored\" needs kl, the KL budget D >= 0 in nats",
                    ));
                }
            },
        };
        let bug = self.bug(method)?;
        // `+ 0.0` reads -0 as 0, so no -0 reaches the report.
        let unsigned = |v: Vec<f64>| v.into_iter().map(|x| x + 0.0).collect();
        Ok(PlanInput {
            method,
            target: unsigned(target),
            draft: unsigned(draft),
            normalize: self.normalize.unwrap_or(false),
            params,
            bug,
        })
    }

    /// `bug` and its sampling options (as `specula plan --bug`).
    fn bug(&self, method: PlanMethod) -> Result<Option<PlanBug>> {
        let Some(name) = self.bug.as_deref() else {
            for (key, given) in [
                ("temperature", self.temperature.is_some()),
                ("topK", self.top_k.is_some()),
                ("topP", self.top_p.is_some()),
            ] {
                if given {
                    return Err(WasmError::option(format!(
                        "{key} applies only with bug (it processes the distributions the buggy \
                         sampler uses); without one, pass the processed distributions"
                    )));
                }
            }
            return Ok(None);
        };
        let names: Vec<&str> = Bug::ALL.iter().map(|b| b.name()).collect();
        let bug = Bug::from_name(name).ok_or_else(|| {
            WasmError::option(format!(
                "unknown bug {name:?}; use one of: {}",
                names.join(", ")
            ))
        })?;
        if method != PlanMethod::Speculative || bug == Bug::CacheReset {
            return Err(WasmError::option(
                PlanError::BugNotPlannable { bug, method }.to_string(),
            ));
        }
        let sampling = sampling(self.temperature, self.top_k, self.top_p)?;
        Ok(Some(PlanBug { bug, sampling }))
    }
}

fn refuse_if_given(
    method: PlanMethod,
    name: &str,
    value: Option<f64>,
    allowed: bool,
    takers: &str,
) -> Result<()> {
    if value.is_none() || allowed {
        Ok(())
    } else {
        Err(WasmError::option(format!(
            "{name} does not apply to method {:?}; it is only for {takers}",
            method.name()
        )))
    }
}

/// Runs the analysis.
///
/// # Errors
/// The option errors of [`PlanOptions::input`] and [`WasmError::Plan`] when the math
/// refuses the distributions or parameters.
pub fn run(options: &PlanOptions) -> Result<PlanReport> {
    let input = options.input()?;
    specula_core::plan_report(&input).map_err(|e| WasmError::Plan(message(&e)))
}

fn message(error: &PlanError) -> String {
    match error {
        PlanError::Distribution { side, source } => {
            let name = match side {
                PlanSide::Target => "target",
                PlanSide::Draft => "draft",
            };
            match source {
                specula_core::Error::NotNormalized { sum, tolerance } => format!(
                    "{name}: the probabilities sum to {sum}, not 1 (allowed deviation {tolerance:e}); \
                     pass normalize: true to rescale them"
                ),
                other => format!("{name}: {other}"),
            }
        }
        PlanError::Analysis(specula_core::Error::BadRho { rho, rho_star }) => {
            format!("rho must be at least rho* = {rho_star} for k-Seq to stay exact, got {rho}")
        }
        PlanError::Analysis(source) => source.to_string(),
        PlanError::OtmTooLarge {
            vocab,
            k,
            variables,
        } => {
            let count = variables.map_or_else(|| "more than 2^128".to_owned(), |v| v.to_string());
            format!(
                "OTM is too large: vocabulary {vocab} with k = {k} drafts needs {vocab}^{} = {count} \
                 LP variables, the limit is {OTM_MAX_VARIABLES}; use a smaller vocabulary or fewer drafts",
                k.saturating_add(1)
            )
        }
        PlanError::MultiroundTooLarge { vocab, k } => format!(
            "multi-round is too large: {k} drafts over {vocab} tokens is {} draft-token \
             updates, the limit is {}; use fewer drafts",
            (*k as u128).saturating_mul(*vocab as u128),
            specula_core::report::MULTIROUND_MAX_WORK
        ),
        PlanError::BugNotPlannable { .. } => error.to_string(),
        PlanError::ParamsMismatch { .. } => format!("internal: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(method: &str) -> PlanOptions {
        PlanOptions {
            method: Some(method.into()),
            target: Some(vec![0.1, 0.2, 0.3, 0.4]),
            draft: Some(vec![0.5, 0.3, 0.15, 0.05]),
            ..PlanOptions::default()
        }
    }

    #[test]
    fn matches_the_core_report() {
        let report = run(&opts("speculative")).unwrap();
        assert!((report.acceptance - 0.5).abs() < 1e-12);
        let report = run(&PlanOptions {
            drafts: Some(3.0),
            ..opts("kseq")
        })
        .unwrap();
        assert_eq!(report.drafts, Some(3));
    }

    #[test]
    fn a_planted_bug_reports_its_output_and_tv() {
        let report = run(&PlanOptions {
            bug: Some("resample-from-target".into()),
            temperature: Some(0.5),
            ..opts("speculative")
        })
        .unwrap();
        let tv = report.tv.unwrap();
        assert!(tv > 0.05 && tv == report.tv_target_output, "{tv}");
        assert_eq!(report.bug.unwrap().temperature, 0.5);
        for (options, needle) in [
            (
                PlanOptions {
                    bug: Some("typo".into()),
                    ..opts("speculative")
                },
                "unknown bug \"typo\"",
            ),
            (
                PlanOptions {
                    bug: Some("cache-reset".into()),
                    ..opts("speculative")
                },
                "cache-reset acts only over a sequence",
            ),
            (
                PlanOptions {
                    bug: Some("argmax-draft".into()),
                    ..opts("race")
                },
                "no token-level plan for race",
            ),
            (
                PlanOptions {
                    top_k: Some(2.0),
                    ..opts("speculative")
                },
                "topK applies only with bug",
            ),
        ] {
            let e = run(&options).unwrap_err();
            assert_eq!(e.code(), "invalid_option");
            assert!(e.to_string().contains(needle), "{e}");
        }
    }

    #[test]
    fn vectors_past_the_vocabulary_limit_are_refused() {
        let long = vec![0.0; specula_core::report::MAX_PLAN_VOCAB + 1];
        let e = run(&PlanOptions {
            target: Some(long.clone()),
            draft: Some(long),
            ..opts("speculative")
        })
        .unwrap_err();
        assert_eq!(e.code(), "invalid_option");
        assert!(
            e.to_string()
                .contains("target has 1048577 entries; the limit is 1048576"),
            "{e}"
        );
    }

    #[test]
    fn negative_zero_is_read_as_zero() {
        let options = PlanOptions {
            method: Some("speculative".into()),
            target: Some(vec![-0.0, 1.0]),
            draft: Some(vec![0.5, 0.5]),
            ..PlanOptions::default()
        };
        let report = run(&options).expect("plan");
        assert!(report.target[0].is_sign_positive(), "{:?}", report.target);
        assert!(report.output.iter().all(|x| x.is_sign_positive()));
    }

    #[test]
    fn input_errors_name_the_option() {
        let e = run(&opts("beam")).unwrap_err().to_string();
        assert!(e.contains("unknown method \"beam\""), "{e}");
        let e = run(&PlanOptions {
            drafts: Some(2.0),
            ..opts("speculative")
        })
        .unwrap_err();
        assert!(e.to_string().contains("drafts does not apply"), "{e}");
        let e = run(&opts("mentored")).unwrap_err().to_string();
        assert!(e.contains("needs kl"), "{e}");
        let e = run(&PlanOptions {
            kl: Some(-1.0),
            ..opts("mentored")
        })
        .unwrap_err();
        assert!(e.to_string().contains("kl must be"), "{e}");
        let e = run(&PlanOptions {
            kl: Some(f64::NAN),
            ..opts("mentored")
        })
        .unwrap_err();
        assert!(e.to_string().contains("NaN"), "{e}");
        let e = run(&PlanOptions {
            target: Some(vec![0.5, 0.6]),
            draft: Some(vec![0.5, 0.5]),
            ..opts("speculative")
        })
        .unwrap_err();
        assert!(e.to_string().contains("normalize: true"), "{e}");
        assert_eq!(e.code(), "invalid_plan");
    }
}
