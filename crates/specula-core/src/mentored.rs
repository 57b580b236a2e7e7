//! Mentored decoding (placeholder being written).
