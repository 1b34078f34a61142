use hassium_core::{Capabilities, DType, Opcode, Scalar};
use hassium_fuser::recorder::Recorder;
use hassium_fuser::{create, FuseCache, FuserOptions};

/// One loop iteration `x = x * dt + sin(x)` on fresh temporaries numbered from `first`.
fn iteration(first: u64, dt: f64) -> hassium_core::Batch {
    let mut r = Recorder::starting_at(first);
    let x = r.existing(1, DType::Float64, &[256]);
    let a = r.binary(Opcode::Multiply, x.clone(), Scalar::Float64(dt));
    let b = r.unary(Opcode::Sin, &x);
    r.assign(Opcode::Add, &x, [a.clone().into(), b.clone().into()]);
    r.free_all([&a, &b]);
    r.finish()
}

/// `count` iterations of [`iteration`]'s body in one batch: 4 instructions each.
fn iterations(first: u64, dt: f64, count: usize) -> hassium_core::Batch {
    let mut r = Recorder::starting_at(first);
    let x = r.existing(1, DType::Float64, &[256]);
    for _ in 0..count {
        let a = r.binary(Opcode::Multiply, x.clone(), Scalar::Float64(dt));
        let b = r.unary(Opcode::Sin, &x);
        r.assign(Opcode::Add, &x, [a.clone().into(), b.clone().into()]);
        r.free_all([&a, &b]);
    }
    r.finish()
}

#[test]
fn a_loop_of_1000_identical_iterations_hits_the_fuse_cache_999_times() {
    let mut cache = FuseCache::new();
    let mut fuser = create("greedy", &FuserOptions::default()).unwrap();
    let caps = Capabilities::all();
    for it in 0..1000u64 {
        let batch = iteration(10 + 3 * it, 0.01 * it as f64);
        let (kernels, hit) = cache.get_or_fuse(&batch, &caps, fuser.as_mut()).unwrap();
        assert_eq!(hit, it > 0);
        // The cached partition, translated to this iteration's bases, is what fusing
        // this batch afresh gives.
        assert_eq!(kernels, fuser.fuse(&batch, &caps).unwrap());
    }
    let stats = cache.stats();
    assert_eq!(
        (stats.cache_hits, stats.cache_misses, stats.batches),
        (999, 1, 1000)
    );
    assert_eq!(stats.kernels, 1000);
    assert_eq!(stats.contracted, 2000);
    assert_eq!(cache.len(), 1);
}

#[test]
fn a_different_body_or_new_capabilities_miss() {
    let mut cache = FuseCache::new();
    let mut fuser = create("greedy", &FuserOptions::default()).unwrap();
    let caps = Capabilities::all();
    cache
        .get_or_fuse(&iteration(10, 0.1), &caps, fuser.as_mut())
        .unwrap();
    let mut other = iteration(20, 0.1);
    other.instrs[1].op = Opcode::Cos;
    assert!(!cache.get_or_fuse(&other, &caps, fuser.as_mut()).unwrap().1);
    let small = Capabilities {
        max_kernel_instrs: 1,
        ..Capabilities::all()
    };
    let (kernels, hit) = cache
        .get_or_fuse(&iteration(30, 0.1), &small, fuser.as_mut())
        .unwrap();
    assert!(!hit);
    assert_eq!(kernels.len(), 3);
}

#[test]
fn the_cache_stays_bounded() {
    let mut cache = FuseCache::with_capacity(4);
    let mut fuser = create("serial", &FuserOptions::default()).unwrap();
    for n in 1..20usize {
        let mut r = Recorder::new();
        let x = r.array(DType::Float64, &[n]);
        let y = r.unary(Opcode::Sqrt, &x);
        r.sync(&y);
        cache
            .get_or_fuse(&r.finish(), &Capabilities::all(), fuser.as_mut())
            .unwrap();
        assert!(cache.len() <= 4);
    }
}

/// A partition store in memory, shared between caches as a directory is between processes.
#[derive(Clone, Default)]
struct MemoryStore(std::sync::Arc<std::sync::Mutex<std::collections::HashMap<u128, Vec<u8>>>>);

impl hassium_fuser::PartitionStore for MemoryStore {
    fn load(&mut self, key: u128) -> Option<Vec<u8>> {
        self.0.lock().unwrap().get(&key).cloned()
    }
    fn save(&mut self, key: u128, bytes: &[u8]) {
        self.0.lock().unwrap().insert(key, bytes.to_vec());
    }
}

impl MemoryStore {
    fn entries(&self) -> usize {
        self.0.lock().unwrap().len()
    }
    fn damage(&self, f: impl Fn(&mut Vec<u8>)) {
        self.0.lock().unwrap().values_mut().for_each(f);
    }
}

/// A fuse cache as a fresh process would have it, keeping partitions in `store`.
fn stored_cache(store: &MemoryStore, fuser: &str) -> FuseCache {
    let mut cache = FuseCache::new();
    cache.set_store(Box::new(store.clone()), fuser);
    cache.set_save_min_seconds(0.0);
    cache
}

#[test]
fn a_second_process_reads_the_partition_the_first_one_fused() {
    let store = MemoryStore::default();
    let mut fuser = create("greedy", &FuserOptions::default()).unwrap();
    let caps = Capabilities::all();
    let mut first = stored_cache(&store, "greedy");
    let f = first
        .get_or_fuse_keyed(&iteration(10, 0.1), &caps, fuser.as_mut())
        .unwrap();
    assert!(!f.hit && !f.from_store);
    assert_eq!(store.entries(), 1);
    // Another run: other base ids and scalars, the same structure.
    let batch = iteration(500, 0.7);
    let mut second = stored_cache(&store, "greedy");
    let f = second
        .get_or_fuse_keyed(&batch, &caps, fuser.as_mut())
        .unwrap();
    assert!(f.hit && f.from_store);
    assert_eq!(f.kernels, fuser.fuse(&batch, &caps).unwrap());
    assert_eq!(second.stats().store_hits, 1);
    // Then the process's own cache serves it.
    let f = second
        .get_or_fuse_keyed(&iteration(900, 0.2), &caps, fuser.as_mut())
        .unwrap();
    assert!(f.hit && !f.from_store);
}

#[test]
fn another_fuser_or_other_capabilities_do_not_read_a_stored_partition() {
    let store = MemoryStore::default();
    let caps = Capabilities::all();
    let mut greedy = create("greedy", &FuserOptions::default()).unwrap();
    let mut serial = create("serial", &FuserOptions::default()).unwrap();
    stored_cache(&store, "greedy")
        .get_or_fuse_keyed(&iteration(10, 0.1), &caps, greedy.as_mut())
        .unwrap();
    let f = stored_cache(&store, "serial")
        .get_or_fuse_keyed(&iteration(10, 0.1), &caps, serial.as_mut())
        .unwrap();
    assert!(!f.from_store);
    let small = Capabilities {
        max_kernel_instrs: 1,
        ..Capabilities::all()
    };
    let f = stored_cache(&store, "greedy")
        .get_or_fuse_keyed(&iteration(10, 0.1), &small, greedy.as_mut())
        .unwrap();
    assert!(!f.from_store);
    assert_eq!(f.kernels.len(), 3);
    assert_eq!(store.entries(), 3);
}

#[test]
fn a_damaged_stored_partition_is_fused_again_and_replaced() {
    let caps = Capabilities::all();
    let mut fuser = create("greedy", &FuserOptions::default()).unwrap();
    // Large enough to be looked up in the store whatever `save_min_seconds` says.
    let batch = iterations(10, 0.1, 10);
    assert!(batch.instrs.len() >= 32);
    let fresh = fuser.fuse(&batch, &caps).unwrap();
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage); 4] = [
        ("truncated", |b| b.truncate(b.len() / 2)),
        ("a flipped body byte", |b| *b.last_mut().unwrap() ^= 1),
        ("empty", |b| b.clear()),
        ("a longer body", |b| b.extend_from_slice(&[0; 8])),
    ];
    for (what, damage) in damages {
        let store = MemoryStore::default();
        stored_cache(&store, "greedy")
            .get_or_fuse_keyed(&batch, &caps, fuser.as_mut())
            .unwrap();
        store.damage(damage);
        let mut cache = stored_cache(&store, "greedy");
        // Damaged entries are replaced even when fusing took no time at all.
        cache.set_save_min_seconds(f64::INFINITY);
        let f = cache
            .get_or_fuse_keyed(&batch, &caps, fuser.as_mut())
            .unwrap();
        assert!(!f.from_store, "{what}");
        assert_eq!(f.kernels, fresh, "{what}");
        let f = stored_cache(&store, "greedy")
            .get_or_fuse_keyed(&batch, &caps, fuser.as_mut())
            .unwrap();
        assert!(f.from_store, "{what}: the entry was written again");
    }
}

#[test]
fn a_small_batch_is_looked_up_in_the_store_only_when_every_fusion_is_saved() {
    let caps = Capabilities::all();
    let mut fuser = create("greedy", &FuserOptions::default()).unwrap();
    let (small, large) = (iteration(10, 0.1), iterations(10, 0.1, 10));
    let store = MemoryStore::default();
    let mut first = stored_cache(&store, "greedy");
    for b in [&small, &large] {
        first.get_or_fuse_keyed(b, &caps, fuser.as_mut()).unwrap();
    }
    assert_eq!(store.entries(), 2);
    // A process that saves only slow fusions fuses the small batch again (as quick as
    // looking for it), and reads the large one.
    let mut second = stored_cache(&store, "greedy");
    second.set_save_min_seconds(0.0005);
    let f = second
        .get_or_fuse_keyed(&small, &caps, fuser.as_mut())
        .unwrap();
    assert!(!f.from_store && f.kernels == fuser.fuse(&small, &caps).unwrap());
    let f = second
        .get_or_fuse_keyed(&large, &caps, fuser.as_mut())
        .unwrap();
    assert!(f.from_store);
    // One that saves every fusion reads both.
    let mut third = stored_cache(&store, "greedy");
    let f = third
        .get_or_fuse_keyed(&small, &caps, fuser.as_mut())
        .unwrap();
    assert!(f.from_store);
}
