//! Gives the fuser a digest of its own sources and the core's (`HASSIUM_FUSER_SOURCES`).
//! Partitions kept on disk (`FuseCache::set_store`) are keyed by it. The core defines the
//! views and overlap rules legality is decided by.

include!("../core/build-support/source_digest.rs");

fn main() {
    emit_source_digest("HASSIUM_FUSER_SOURCES", &["src", "../core/src"]);
}
