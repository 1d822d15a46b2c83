//! criterion benchmarks live in `benches/`.
