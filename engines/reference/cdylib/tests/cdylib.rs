//! The engine library loads through the ABI and runs a batch across it.

#[path = "../../tests/common/mod.rs"]
mod common;
use common::*;
use hassium_core::{DType, Instr, Kernel, Opcode, Scalar};
use hassium_engine_abi::{Buffers, Engine, HostBuffer, LoadedEngine};
use std::path::PathBuf;

/// The cdylib cargo built with this test: next to the test binary (`target/<profile>/deps`)
/// or, after a `cargo build`, one level up.
fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("test binary directory");
    let name = format!(
        "{}hassium_engine_reference_so{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let candidates = [deps.join(&name), deps.parent().unwrap_or(deps).join(&name)];
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| panic!("{name} not built next to {}", deps.display()))
}

#[test]
fn the_cdylib_loads_through_the_abi_and_runs_a_batch() {
    let mut engine =
        LoadedEngine::open(&library(), &toml::Table::new(), None).expect("load engine");
    assert_eq!(engine.name(), "reference");
    let mut h = Harness::new();
    let a = h.put(DType::Float64, &[1.0f64, 4.0, 9.0]);
    let out = h.zeros(DType::Float64, &[3]);
    h.push(Instr::new(Opcode::Sqrt, out.clone(), [a.into()]));
    let mut a_buf = [1.0f64, 4.0, 9.0];
    let mut o_buf = [0.0f64; 3];
    let list = [
        HostBuffer {
            base: 1,
            data: a_buf.as_mut_ptr() as *mut u8,
            nelem: 3,
            dtype: DType::Float64 as u8,
            host_dirty: 1,
        },
        HostBuffer {
            base: 2,
            data: o_buf.as_mut_ptr() as *mut u8,
            nelem: 3,
            dtype: DType::Float64 as u8,
            host_dirty: 1,
        },
    ];
    assert_eq!(
        (out.base.0, h.batch.instrs[0].ins[0].base().unwrap().0),
        (2, 1)
    );
    let kernel = Kernel {
        instrs: [0].into_iter().collect(),
        ..Kernel::default()
    };
    engine
        .execute(
            &h.batch,
            std::slice::from_ref(&kernel),
            &Buffers::new(&list),
        )
        .expect("execute");
    assert_eq!(o_buf, [1.0, 2.0, 3.0]);
    assert_eq!(engine.stats().kernels_run, 1);

    // Errors cross the boundary as messages naming the instruction.
    h.batch.instrs[0] = Instr::new(
        Opcode::Power,
        out.clone(),
        [out.clone().into(), Scalar::Float64(2.0).into()],
    );
    engine
        .execute(&h.batch, &[kernel], &Buffers::new(&list))
        .expect("power");
    assert_eq!(o_buf, [1.0, 4.0, 9.0]);
    let bad = Instr::new(
        Opcode::Add,
        out.clone(),
        [out.into(), Scalar::Int32(1).into()],
    );
    h.batch.instrs[0] = bad;
    let e = engine.execute(
        &h.batch,
        &[Kernel {
            instrs: [0].into_iter().collect(),
            ..Kernel::default()
        }],
        &Buffers::new(&list),
    );
    let msg = e.unwrap_err().to_string();
    assert!(msg.contains("instruction 0 (add)"), "{msg}");
}
