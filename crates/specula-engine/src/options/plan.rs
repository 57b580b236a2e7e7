//! The options of the token-level analysis (`specula plan`, npm's `plan()`), defined
//! once: [`PlanOptions`] holds them as given, [`PlanOptions::resolve`] checks them into
//! the core's [`PlanInput`], and [`run_plan`] runs it, turning each refusal of the math
//! into an [`OptionError`] that names the option at fault. The rule for an option the
//! method does not use is the decoding options' rule: it is refused, never ignored.

use serde::Serialize;
use specula_core::{
    Bug, OTM_MAX_VARIABLES, PlanError, PlanInput, PlanMethod, PlanParams, PlanReport,
    PlanSelection, PlanSide, SamplingConfig,
};

use super::limits::{
    DEFAULT_DRAFTS, DEFAULT_TYPICAL_DELTA, DEFAULT_TYPICAL_EPSILON, MAX_PLAN_DRAFTS,
    MAX_TYPICAL_DELTA, PLAN_KL_RANGE, TYPICAL_DELTA_RANGE, TYPICAL_EPSILON_RANGE,
};
use super::{
    FromRaw, MethodName, MethodOption, OptionError, Raw, object_entries, sampling, show_number,
    take_list, whole_usize,
};

/// The names of the [`PlanOptions`], as JavaScript spells them, in documentation order.
pub const PLAN_OPTION_NAMES: [&str; 14] = [
    "method",
    "selection",
    "target",
    "draft",
    "drafts",
    "kl",
    "rho",
    "epsilon",
    "delta",
    "normalize",
    "bug",
    "temperature",
    "topK",
    "topP",
];

/// Options of one token-level analysis, as given (types checked, ranges not yet). The
/// names are decoding's: `method` is a [`MethodName`] with a token-level scheme
/// ([`PlanMethod`]), SpecTr's rule is `selection`, and greedy verification is
/// `temperature: 0`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct PlanOptions {
    /// The scheme, by decoding's name: one of the [`PlanMethod`] names (required).
    pub method: Option<String>,
    /// SpecTr's selection rule (spectr only): `"kseq"` (the default), `"race"` (the
    /// ratio race) or `"otm"` (the exact linear program, which only a plan solves).
    pub selection: Option<String>,
    /// The target's probabilities (required): the model's raw softmax, which
    /// `temperature`, `topK` and `topP` process.
    pub target: Option<Vec<f64>>,
    /// The draft's probabilities, as many as the target's (required).
    pub draft: Option<Vec<f64>>,
    /// k, the i.i.d. drafts of spectr and multiround (default [`DEFAULT_DRAFTS`], at
    /// most [`MAX_PLAN_DRAFTS`]).
    pub drafts: Option<f64>,
    /// The KL budget D of mentored decoding, in nats (required there).
    pub kl: Option<f64>,
    /// k-Seq's ρ, at least ρ* (spectr with selection kseq only; default ρ*).
    pub rho: Option<f64>,
    /// Typical acceptance's ceiling ε on its threshold, in [0, 1] (typical only; default
    /// [`DEFAULT_TYPICAL_EPSILON`]).
    pub epsilon: Option<f64>,
    /// Typical acceptance's scale δ ≥ 0 of `exp(−H(target))` (typical only; default
    /// [`DEFAULT_TYPICAL_DELTA`]).
    pub delta: Option<f64>,
    /// Rescale both distributions to sum to 1 instead of refusing them.
    pub normalize: Option<bool>,
    /// A deliberate bug to plant (speculative only), by its kebab-case name.
    pub bug: Option<String>,
    /// The temperature applied to both distributions, as decoding applies it (default 1:
    /// as given); 0 is greedy verification, planned as method speculative.
    pub temperature: Option<f64>,
    /// Keep the k most likely tokens of both distributions (not at temperature 0).
    pub top_k: Option<f64>,
    /// Keep the smallest set of tokens with at least this mass, in both distributions
    /// (not at temperature 0).
    pub top_p: Option<f64>,
}

impl PlanOptions {
    /// Reads the options from an object of raw values: every name must be one of
    /// [`PLAN_OPTION_NAMES`] and every value of its option's type (null means "not
    /// given").
    ///
    /// # Errors
    /// [`OptionError`] naming the first unknown option or the first value of a wrong type.
    pub fn from_raw(raw: Raw) -> Result<Self, OptionError> {
        let numbers = "an array of numbers";
        let mut o = Self::default();
        for (key, value) in object_entries(raw, "an object such as { method, target, draft }")? {
            match key.as_str() {
                "method" => o.method = String::take(&key, value)?,
                "selection" => o.selection = String::take(&key, value)?,
                "target" => o.target = take_list(&key, value, numbers)?,
                "draft" => o.draft = take_list(&key, value, numbers)?,
                "drafts" => o.drafts = f64::take(&key, value)?,
                "kl" => o.kl = f64::take(&key, value)?,
                "rho" => o.rho = f64::take(&key, value)?,
                "epsilon" => o.epsilon = f64::take(&key, value)?,
                "delta" => o.delta = f64::take(&key, value)?,
                "normalize" => o.normalize = bool::take(&key, value)?,
                "bug" => o.bug = String::take(&key, value)?,
                "temperature" => o.temperature = f64::take(&key, value)?,
                "topK" => o.top_k = f64::take(&key, value)?,
                "topP" => o.top_p = f64::take(&key, value)?,
                _ => return Err(OptionError::unknown(key, &PLAN_OPTION_NAMES)),
            }
        }
        Ok(o)
    }

    /// Checks every option and its fit with the method, giving the core's input.
    ///
    /// # Errors
    /// [`OptionError`] naming the first option at fault: a method or selection that is
    /// not one (a former name refused with its new spelling), an option the scheme does
    /// not use, a value out of range.
    pub fn resolve(&self) -> Result<PlanInput, OptionError> {
        let method = plan_method(self.method.as_deref())?;
        let selection = match (method, self.selection.as_deref()) {
            (PlanMethod::Spectr, Some(name)) => Some(plan_selection(name)?),
            (PlanMethod::Spectr, None) => Some(PlanSelection::Kseq),
            _ => None,
        };
        let target = vector("target", self.target.as_ref())?;
        let draft = vector("draft", self.draft.as_ref())?;
        if target.len() != draft.len() {
            return Err(OptionError::invalid(
                "draft",
                format!("as many entries as target ({})", target.len()),
                entries(draft.len()),
            ));
        }
        self.refuse_unused(method, selection)?;
        let k = match self.drafts {
            Some(k) => whole_usize("drafts", k, 1, MAX_PLAN_DRAFTS, "")?,
            None => DEFAULT_DRAFTS,
        };
        let params = match (method, selection) {
            (PlanMethod::Speculative, _) => PlanParams::None,
            (PlanMethod::Spectr, Some(PlanSelection::Race)) => PlanParams::Race(k),
            (PlanMethod::Spectr, Some(PlanSelection::Otm)) => PlanParams::Otm(k),
            (PlanMethod::Spectr, _) => PlanParams::KSeq {
                k,
                rho: match self.rho {
                    Some(r) if !r.is_finite() => {
                        return Err(OptionError::invalid(
                            "rho",
                            "a finite number >= rho* (at least 1)",
                            show_number(r),
                        ));
                    }
                    r => r,
                },
            },
            (PlanMethod::Multiround, _) => PlanParams::Drafts(k),
            (PlanMethod::Typical, _) => PlanParams::Typical {
                epsilon: match self.epsilon {
                    Some(e) => {
                        TYPICAL_EPSILON_RANGE.check("epsilon", e, "a probability from 0 to 1")?
                    }
                    None => DEFAULT_TYPICAL_EPSILON,
                },
                delta: match self.delta {
                    Some(d) => TYPICAL_DELTA_RANGE.check(
                        "delta",
                        d,
                        &format!("a number from 0 to {MAX_TYPICAL_DELTA:e}"),
                    )?,
                    None => DEFAULT_TYPICAL_DELTA,
                },
            },
            (PlanMethod::Mentored, _) => match self.kl {
                // `+ 0.0` reads -0 as 0.
                Some(d) if PLAN_KL_RANGE.contains(d) => PlanParams::Kl(d + 0.0),
                Some(d) => {
                    return Err(OptionError::invalid(
                        "kl",
                        "a finite number >= 0 (nats)",
                        show_number(d),
                    ));
                }
                None => {
                    return Err(OptionError::missing(
                        "kl",
                        "method \"mentored\" needs the KL budget D >= 0, in nats",
                    ));
                }
            },
        };
        let bug = self.bug()?;
        let sampling = self.sampling(method)?;
        // `+ 0.0` reads -0 as 0, so no -0 reaches the report.
        let unsigned = |v: &[f64]| v.iter().map(|x| x + 0.0).collect();
        Ok(PlanInput {
            method,
            target: unsigned(target),
            draft: unsigned(draft),
            normalize: self.normalize.unwrap_or(false),
            params,
            sampling,
            bug,
        })
    }

    /// Refuses every option given that the scheme does not use. The options a plan
    /// shares with decoding go by decoding's table ([`METHOD_OPTIONS`]): `selection` for
    /// spectr, `drafts` for spectr and multiround, `kl` for mentored, `epsilon` and
    /// `delta` for typical. The plan's own: `rho` is k-Seq's (spectr with selection
    /// kseq), and a bug is planned for speculative only.
    ///
    /// [`METHOD_OPTIONS`]: super::METHOD_OPTIONS
    fn refuse_unused(
        &self,
        method: PlanMethod,
        selection: Option<PlanSelection>,
    ) -> Result<(), OptionError> {
        let decoding = decoding_name(method);
        for (option, given) in [
            (MethodOption::Selection, self.selection.is_some()),
            (MethodOption::Drafts, self.drafts.is_some()),
            (MethodOption::Kl, self.kl.is_some()),
            (MethodOption::Epsilon, self.epsilon.is_some()),
            (MethodOption::Delta, self.delta.is_some()),
        ] {
            if given && !decoding.takes(option) {
                return Err(OptionError::unused(
                    option.name(),
                    method.name(),
                    &option.users(),
                ));
            }
        }
        match (self.rho, selection) {
            (Some(_), Some(PlanSelection::Kseq)) | (None, _) => {}
            (Some(rho), Some(other)) => {
                return Err(OptionError::invalid(
                    "rho",
                    format!(
                        "left out with selection {:?} (rho is k-Seq's: selection \"kseq\")",
                        other.name()
                    ),
                    show_number(rho),
                ));
            }
            (Some(_), None) => {
                return Err(OptionError::unused(
                    "rho",
                    method.name(),
                    "method \"spectr\" with selection \"kseq\" (k-Seq's rho)",
                ));
            }
        }
        if self.bug.is_some() && method != PlanMethod::Speculative {
            return Err(OptionError::unused(
                "bug",
                method.name(),
                "speculative in a plan (sample shows bugs with the other methods)",
            ));
        }
        Ok(())
    }

    /// `bug`, checked by name: a token-level bug.
    fn bug(&self) -> Result<Option<Bug>, OptionError> {
        let Some(name) = self.bug.as_deref() else {
            return Ok(None);
        };
        let bug = Bug::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Bug::ALL.iter().map(|b| b.name()).collect();
            OptionError::invalid(
                "bug",
                format!("one of {}", names.join(", ")),
                format!("{name:?}"),
            )
        })?;
        if bug == Bug::CacheReset {
            return Err(OptionError::invalid(
                "bug",
                "a token-level bug: cache-reset acts only over a sequence (see it with sample)",
                "\"cache-reset\"",
            ));
        }
        Ok(Some(bug))
    }

    /// `temperature`, `topK` and `topP`, checked as decoding checks them; they process
    /// both distributions for every method. Temperature 0 (or one so small that it is
    /// greedy) is greedy verification, which decoding uses for every method there: it is
    /// planned as method speculative, without a bug (greedy verification is unaffected by
    /// them) and without top-k or top-p (which keep the argmax it already keeps alone).
    fn sampling(&self, method: PlanMethod) -> Result<SamplingConfig, OptionError> {
        let sampling = sampling(self.temperature, self.top_k, self.top_p)?;
        if !sampling.is_greedy() {
            return Ok(sampling);
        }
        let t = show_number(sampling.temperature);
        if method != PlanMethod::Speculative {
            return Err(OptionError::invalid(
                "temperature",
                format!(
                    "above 0 for method {:?}: at temperature 0 every method is greedy \
                     verification, planned as method \"speculative\" with temperature 0",
                    method.name()
                ),
                t,
            ));
        }
        let greedy = |field: &str, why: &str, got: String| {
            Err(OptionError::invalid(
                field,
                format!("left out at temperature 0 ({why})"),
                got,
            ))
        };
        if let Some(name) = &self.bug {
            return greedy(
                "bug",
                "greedy verification is unaffected by the bugs: give a temperature above 0",
                format!("{name:?}"),
            );
        }
        if let Some(k) = self.top_k {
            return greedy(
                "topK",
                "greedy keeps the argmax alone already",
                show_number(k),
            );
        }
        if let Some(p) = self.top_p {
            return greedy(
                "topP",
                "greedy keeps the argmax alone already",
                show_number(p),
            );
        }
        Ok(sampling)
    }
}

/// `method`: one of the [`PlanMethod`] names, which are decoding's; a decoding method
/// without a token-level scheme and the former names of plans are refused with the
/// spelling to use.
fn plan_method(name: Option<&str>) -> Result<PlanMethod, OptionError> {
    let names = || {
        format!(
            "one of {}",
            PlanMethod::ALL.map(PlanMethod::name).join(", ")
        )
    };
    let Some(name) = name else {
        return Err(OptionError::missing("method", names()));
    };
    if let Some(method) = PlanMethod::from_name(name) {
        return Ok(method);
    }
    let hint = match (name.parse::<MethodName>(), name) {
        (Ok(MethodName::Autoregressive), _) => {
            " (\"autoregressive\" drafts nothing, so it has no acceptance to plan)"
        }
        (Ok(MethodName::Lookup), _) => {
            " (\"lookup\" verifies its copied drafts by standard speculative sampling: plan \
             method \"speculative\" with a one-hot draft)"
        }
        (_, "kseq") => " (SpecTr k-Seq is method \"spectr\", whose default selection is \"kseq\")",
        (_, "race") => " (the ratio race is method \"spectr\" with selection \"race\")",
        (_, "otm") => " (the exact OTM linear program is method \"spectr\" with selection \"otm\")",
        (_, "greedy") => " (greedy verification is method \"speculative\" with temperature 0)",
        _ => "",
    };
    let shown: String = name.chars().take(40).collect();
    Err(OptionError::invalid(
        "method",
        format!("{}{hint}", names()),
        format!("{shown:?}"),
    ))
}

/// `selection` of spectr: one of the [`PlanSelection`] names.
fn plan_selection(name: &str) -> Result<PlanSelection, OptionError> {
    PlanSelection::from_name(name).ok_or_else(|| {
        let shown: String = name.chars().take(40).collect();
        OptionError::invalid(
            "selection",
            "\"kseq\" (k-Seq, the default), \"race\" (the ratio race) or \"otm\" (the exact \
             OTM linear program)",
            format!("{shown:?}"),
        )
    })
}

/// Decoding's name of a plan's method (the same spelling).
fn decoding_name(method: PlanMethod) -> MethodName {
    match method {
        PlanMethod::Speculative => MethodName::Speculative,
        PlanMethod::Spectr => MethodName::Spectr,
        PlanMethod::Multiround => MethodName::Multiround,
        PlanMethod::Mentored => MethodName::Mentored,
        PlanMethod::Typical => MethodName::Typical,
    }
}

/// A required probability vector of at most [`MAX_PLAN_VOCAB`] entries.
///
/// [`MAX_PLAN_VOCAB`]: specula_core::report::MAX_PLAN_VOCAB
fn vector<'a>(field: &str, values: Option<&'a Vec<f64>>) -> Result<&'a [f64], OptionError> {
    let limit = specula_core::report::MAX_PLAN_VOCAB;
    let values = values.ok_or_else(|| {
        OptionError::missing(field, format!("the {field} probabilities, one per token"))
    })?;
    if values.len() > limit {
        return Err(OptionError::invalid(
            field,
            format!("at most {limit} entries"),
            entries(values.len()),
        ));
    }
    Ok(values)
}

/// "1 entry", "3 entries".
fn entries(n: usize) -> String {
    if n == 1 {
        "1 entry".into()
    } else {
        format!("{n} entries")
    }
}

/// Why a checked plan could not be made.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanFailure {
    /// The math refused an input; the error names the option at fault.
    Input(OptionError),
    /// The analysis itself failed (the LP solver), through no fault of the input.
    Analysis(String),
}

impl std::fmt::Display for PlanFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Input(e) => e.fmt(f),
            Self::Analysis(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for PlanFailure {}

/// Runs the analysis of a resolved plan.
///
/// # Errors
/// [`PlanFailure::Input`] when the distributions or parameters are refused (not
/// normalised, ρ below ρ*, an LP too large, …), naming the option;
/// [`PlanFailure::Analysis`] when the solver fails.
pub fn run_plan(input: &PlanInput) -> Result<PlanReport, PlanFailure> {
    specula_core::plan_report(input).map_err(failure)
}

/// The option a refusal of the math is about, with what it must be.
fn failure(error: PlanError) -> PlanFailure {
    use specula_core::Error as Core;
    let input = PlanFailure::Input;
    match error {
        PlanError::Distribution { side, source } => {
            let field = match side {
                PlanSide::Target => "target",
                PlanSide::Draft => "draft",
            };
            input(distribution_error(field, &source))
        }
        PlanError::Analysis(Core::BadRho { rho, rho_star }) => input(OptionError::invalid(
            "rho",
            format!("at least rho* = {rho_star} for k-Seq to stay exact"),
            show_number(rho),
        )),
        PlanError::Analysis(Core::BadKlBudget(d)) => input(OptionError::invalid(
            "kl",
            "a finite number >= 0 (nats)",
            show_number(d),
        )),
        PlanError::Analysis(source) => PlanFailure::Analysis(source.to_string()),
        PlanError::OtmTooLarge {
            vocab,
            k,
            variables,
        } => {
            let count = variables.map_or_else(|| "more than 2^128".to_owned(), |v| v.to_string());
            input(OptionError::invalid(
                "drafts",
                format!(
                    "small enough for the OTM linear program: vocabulary^(drafts + 1) at most \
                     {OTM_MAX_VARIABLES} variables (use fewer drafts or a smaller vocabulary)"
                ),
                format!("{k}, which over {vocab} tokens needs {count}"),
            ))
        }
        PlanError::MultiroundTooLarge { vocab, k } => {
            let limit = specula_core::report::MULTIROUND_MAX_WORK;
            input(OptionError::invalid(
                "drafts",
                format!(
                    "at most {} for a multi-round plan over {vocab} tokens (drafts × vocabulary \
                     at most {limit})",
                    limit / (vocab.max(1) as u128)
                ),
                k.to_string(),
            ))
        }
        PlanError::Greedy { method, .. } => input(OptionError::invalid(
            "temperature",
            "above 0 for this plan (temperature 0 is greedy verification, planned as method \
             \"speculative\" without a bug)",
            format!("0 with method {:?}", method.name()),
        )),
        PlanError::BugNotPlannable { bug, method } => input(OptionError::invalid(
            "bug",
            format!("a bug with a token-level plan for {}", method.name()),
            format!("{:?}", bug.name()),
        )),
        // `resolve` builds the parameters from the method, so they always match.
        PlanError::ParamsMismatch { .. } => PlanFailure::Analysis(error.to_string()),
    }
}

/// A distribution refused by the core, as an error about `field` (or one entry of it).
fn distribution_error(field: &str, error: &specula_core::Error) -> OptionError {
    use specula_core::Error as Core;
    let expected = "probabilities: finite, >= 0 and not all zero";
    match *error {
        Core::NotNormalized { sum, tolerance } => OptionError::invalid(
            field,
            format!(
                "probabilities that sum to 1 (within {tolerance:e}), or set normalize to \
                 rescale them"
            ),
            format!("a sum of {sum}"),
        ),
        Core::Empty => OptionError::invalid(field, expected, "no entries"),
        Core::AllZero => OptionError::invalid(field, expected, "only zeros"),
        Core::NotANumber { index } => {
            OptionError::invalid(format!("{field}[{index}]"), "a probability >= 0", "NaN")
        }
        Core::Infinite { index, value } | Core::Negative { index, value } => OptionError::invalid(
            format!("{field}[{index}]"),
            "a finite probability >= 0",
            show_number(value),
        ),
        ref other => OptionError::invalid(field, expected, other.to_string()),
    }
}
