//! OTM (placeholder being written).
