//! `specula plan`: runs one scheme's closed-form analysis. The report itself is built by
//! [`specula_core::report`], shared with the browser package's `plan()`; the options and
//! the wording of every refusal are the engine's ([`specula_engine::options::run_plan`]),
//! shown with the flags' names, as are the notes on what the tolerances let through (a
//! sum within 1e-6 of 1 rescaled, a `--rho` just below ρ* raised).

pub use specula_core::PlanReport;
use specula_engine::options::{PlanFailure, run_plan};

use crate::args::PlanRequest;
use crate::error::CliError;

/// Runs the analysis.
///
/// # Errors
/// Distributions or parameters the math refuses (usage errors naming the flag), or a
/// failing LP solver.
pub fn run(request: &PlanRequest) -> Result<PlanReport, CliError> {
    let mut report = run_plan(&request.input).map_err(|failure| match failure {
        PlanFailure::Input(e) => request.error(e),
        PlanFailure::Analysis(message) => CliError::failure(message),
    })?;
    // What the tolerances let through is said in the flags' names (`--target`, `--rho`).
    for note in &mut report.notes {
        note.message = note.describe(crate::decode_args::flag_name);
    }
    Ok(report)
}
