//! No code. Its dependencies name, for each third-party crate the workspace builds, the
//! union of the features that any of the workspace's builds asks for (tests and their
//! dev-dependencies included). Every member depends on it, so `cargo build` and
//! `cargo test` resolve each crate to the same features and share one build of it and
//! of everything above it; without it a cold `cargo test` rebuilt about 200 units the
//! release build had just made (3 minutes on 2 cores).
//!
//! Generated from `.config/hakari.toml` by `cargo hakari generate` (and the members'
//! dependency lines by `cargo hakari manage-deps`); `cargo hakari verify` says whether it
//! is current. A stale one costs build time, never correctness.
