use hassium_engine_abi::EngineStats;

/// Kernels the `HASSIUM_STATS=1` report lists.
const SHOWN_KERNELS: usize = 5;
use serde::Serialize;

/// What `hassium.stats()` reports: the runtime's own counters plus the engine's.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RuntimeStats {
    pub stack: String,
    pub instrs_recorded: u64,
    pub flushes: u64,
    /// Flushes run on the pipeline's worker while the program recorded on.
    pub flushes_pipelined: u64,
    pub instrs_flushed: u64,
    pub kernels: u64,
    pub bases_contracted: u64,
    /// Bases kept as the generator that fills them instead of memory (`arange`).
    pub bases_generated: u64,
    pub fuse_cache_hits: u64,
    pub fuse_cache_misses: u64,
    /// Fuse-cache hits read from partitions an earlier process kept on disk.
    pub fuse_cache_store_hits: u64,
    pub fallback_instrs: u64,
    /// Instructions that failed while they ran (their dependents poisoned, see vem's
    /// `poison`).
    pub failures: u64,
    pub filter_seconds: f64,
    pub fuse_seconds: f64,
    pub execute_seconds: f64,
    pub host_bytes_allocated: u64,
    pub engine: EngineStats,
}

impl RuntimeStats {
    /// The fraction of fuse-cache lookups that hit.
    pub fn fuse_cache_hit_rate(&self) -> f64 {
        let n = self.fuse_cache_hits + self.fuse_cache_misses;
        if n == 0 {
            0.0
        } else {
            self.fuse_cache_hits as f64 / n as f64
        }
    }

    /// Achieved bandwidth of executed kernels, in GB/s.
    pub fn gbps(&self) -> f64 {
        if self.engine.execute_seconds > 0.0 {
            self.engine.bytes_moved as f64 / self.engine.execute_seconds / 1e9
        } else {
            0.0
        }
    }
}

impl std::fmt::Display for RuntimeStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = &self.engine;
        writeln!(f, "hassium stats (stack {})", self.stack)?;
        writeln!(f, "  instructions recorded  {}", self.instrs_recorded)?;
        writeln!(
            f,
            "  flushes                {} ({} instructions, {} pipelined)",
            self.flushes, self.instrs_flushed, self.flushes_pipelined
        )?;
        writeln!(f, "  kernels                {}", self.kernels)?;
        writeln!(f, "  arrays contracted      {}", self.bases_contracted)?;
        writeln!(f, "  arrays kept generated  {}", self.bases_generated)?;
        writeln!(
            f,
            "  fuse cache             {} hits ({} from disk), {} misses ({:.1}% hit rate)",
            self.fuse_cache_hits,
            self.fuse_cache_store_hits,
            self.fuse_cache_misses,
            100.0 * self.fuse_cache_hit_rate()
        )?;
        writeln!(
            f,
            "  kernel cache           {} compiled, {} memory hits, {} disk hits, {} interpreted",
            e.kernels_compiled, e.cache_hits_memory, e.cache_hits_disk, e.interpreted
        )?;
        writeln!(
            f,
            "  fallback instructions  {}",
            self.fallback_instrs + e.fallbacks
        )?;
        if self.failures > 0 {
            writeln!(f, "  failed instructions    {}", self.failures)?;
        }
        writeln!(
            f,
            "  time                   filters {:.4}s, fusion {:.4}s, compile {:.4}s, execute {:.4}s",
            self.filter_seconds, self.fuse_seconds, e.compile_seconds, self.execute_seconds
        )?;
        write!(
            f,
            "  bytes moved            {} ({:.2} GB/s)",
            e.bytes_moved,
            self.gbps()
        )?;
        // Engine-specific times (an OpenCL engine's start-up and read-back waits, say).
        let times: Vec<String> = e
            .extra
            .iter()
            .filter_map(|(k, v)| Some(format!("{} {v:.4}s", k.strip_suffix("_seconds")?)))
            .collect();
        if !times.is_empty() {
            write!(f, "\n  engine time            {}", times.join(", "))?;
        }
        // The kernels that took longest (all of them are in `hassium.stats()`).
        for (n, k) in e.kernels.iter().take(SHOWN_KERNELS).enumerate() {
            let label = if n == 0 { "slowest kernels" } else { "" };
            write!(
                f,
                "\n  {label:<22} {:.12} {} calls, {:.4}s, {:.2} GB/s, {} instrs over {} elements",
                k.key, k.calls, k.seconds, k.gb_per_s, k.instrs, k.elements
            )?;
            // Whether the compiler vectorised its simd loops, where it said.
            match k.simd_loops {
                Some((done, all)) if done == all && all > 0 => write!(f, ", vectorised")?,
                Some((0, all)) if all > 0 => write!(f, ", NOT vectorised (0 of {all} simd loops)")?,
                // A loop nest with a second copy for special scalars (power-of-two
                // divisors), of which one vectorised.
                Some((done, all)) if all > 0 => {
                    write!(f, ", partly vectorised ({done} of {all} simd loops)")?
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::RuntimeStats;

    #[test]
    fn the_report_lists_engine_times_and_only_those_extras() {
        let mut s = RuntimeStats {
            stack: "opencl".into(),
            ..Default::default()
        };
        let text = s.to_string();
        assert!(!text.contains("engine time"), "{text}");
        s.engine.extra.insert("startup_seconds".into(), 0.25);
        s.engine.extra.insert("sync_seconds".into(), 0.0125);
        s.engine.extra.insert("threads".into(), 2.0);
        let text = s.to_string();
        assert!(
            text.contains("\n  engine time            startup 0.2500s, sync 0.0125s"),
            "{text}"
        );
        assert!(!text.contains("threads"), "{text}");
    }

    #[test]
    fn the_slowest_kernels_say_whether_their_loops_vectorised() {
        use hassium_engine_abi::KernelStats;
        let mut s = RuntimeStats::default();
        for (key, simd_loops) in [("a", Some((2, 2))), ("b", Some((0, 1))), ("c", None)] {
            s.engine.kernels.push(KernelStats {
                key: key.repeat(32),
                simd_loops,
                ..Default::default()
            });
        }
        let text = s.to_string();
        let line = |k: &str| {
            text.lines()
                .find(|l| l.contains(&k.repeat(12)))
                .unwrap_or_default()
                .to_string()
        };
        assert!(line("a").ends_with(", vectorised"), "{text}");
        assert!(
            line("b").ends_with(", NOT vectorised (0 of 1 simd loops)"),
            "{text}"
        );
        assert!(line("c").ends_with(" elements"), "{text}");
    }
}
