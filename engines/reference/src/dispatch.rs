//! The one place that maps a runtime [`DType`](hassium_core::DType) to a Rust element type.
//!
//! `with_dtype!(dtype, T => body)` expands `body` once per dtype with `T` bound to that
//! dtype's element type, so every interpreter routine is written once, generically, and
//! monomorphised here instead of being copied per dtype.

macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {{
        use hassium_core::DType as __D;
        match $dtype {
            __D::Bool => {
                type $T = bool;
                $body
            }
            __D::Int8 => {
                type $T = i8;
                $body
            }
            __D::Int16 => {
                type $T = i16;
                $body
            }
            __D::Int32 => {
                type $T = i32;
                $body
            }
            __D::Int64 => {
                type $T = i64;
                $body
            }
            __D::UInt8 => {
                type $T = u8;
                $body
            }
            __D::UInt16 => {
                type $T = u16;
                $body
            }
            __D::UInt32 => {
                type $T = u32;
                $body
            }
            __D::UInt64 => {
                type $T = u64;
                $body
            }
            __D::Float16 => {
                type $T = half::f16;
                $body
            }
            __D::Float32 => {
                type $T = f32;
                $body
            }
            __D::Float64 => {
                type $T = f64;
                $body
            }
            __D::Complex64 => {
                type $T = num_complex::Complex<f32>;
                $body
            }
            __D::Complex128 => {
                type $T = num_complex::Complex<f64>;
                $body
            }
        }
    }};
}
