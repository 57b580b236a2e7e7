//! [`with_rows!`]: runs an expression generic over a const row count `R` with `R` equal to
//! a run-time count from 1 to 8 (more counts as 8), so that kernels can keep one array of
//! accumulator registers per row.

/// `with_rows!(count, |R| kernel::<R>(…))`.
macro_rules! with_rows {
    ($count:expr, |$r:ident| $f:expr) => {
        $crate::const_rows::with_rows!(@arms $count, $r, $f; 1 2 3 4 5 6 7)
    };
    (@arms $count:expr, $r:ident, $f:expr; $($n:literal)*) => {
        match $count {
            $($n => {
                const $r: usize = $n;
                $f
            })*
            _ => {
                const $r: usize = 8;
                $f
            }
        }
    };
}
pub(crate) use with_rows;
