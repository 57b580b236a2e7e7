//! [`with_rows!`]: runs an expression generic over a const row count `R` with `R` equal to
//! a run-time count from 1 to 8 (more counts as 8), so that kernels can keep one array of
//! accumulator registers per row; [`each_row!`]: a loop over those rows, unrolled.

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

/// `each_row!(R, |r| { … })`: the block once for each `r` in `0..R` (`R` ≤ 8), with `r` a
/// constant in each copy.
///
/// Why: a kernel's accumulators (`[…; R]`) stay in registers only when every access names
/// its row as a constant. A plain `for r in 0..R` that the compiler did not unroll (it
/// did not at 8 rows × 3 vectors) made it store every accumulator to the stack after
/// every multiply-add.
macro_rules! each_row {
    ($rows:expr, |$r:ident| $body:block) => {
        $crate::const_rows::each_row!(@copies $rows, $r, $body; 0 1 2 3 4 5 6 7)
    };
    (@copies $rows:expr, $r:ident, $body:block; $($n:literal)*) => {$(
        if $n < $rows {
            let $r: usize = $n;
            $body
        }
    )*};
}
pub(crate) use each_row;
