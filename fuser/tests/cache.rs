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
