//! Property and regression tests over the model live in `tests/`; this
//! library holds their shared helpers.
#![forbid(unsafe_code)]
