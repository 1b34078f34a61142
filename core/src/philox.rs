//! Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11),
//! the counter-based generator behind the `Random` opcode. Element `i` of stream `s` under
//! seed `k` depends only on `(k, s, i)`, so every engine, thread split and MPI rank count
//! produces the same numbers. Codegen renders the same rounds in C and OpenCL C.

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// The four output words of Philox-4x32-10 for `counter` under `key`.
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (counter, key);
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(W0);
            k[1] = k[1].wrapping_add(W1);
        }
        let p0 = (M0 as u64) * (c[0] as u64);
        let p1 = (M1 as u64) * (c[2] as u64);
        c = [
            ((p1 >> 32) as u32) ^ c[1] ^ k[0],
            p1 as u32,
            ((p0 >> 32) as u32) ^ c[3] ^ k[1],
            p0 as u32,
        ];
    }
    c
}

/// The `Random` opcode's value at linear index `i`: the first two Philox words of counter
/// `(i, stream)` under key `seed`, as `(w1 << 32) | w0`.
pub fn random_u64(seed: u64, stream: u64, i: u64) -> u64 {
    let w = philox4x32_10(
        [
            i as u32,
            (i >> 32) as u32,
            stream as u32,
            (stream >> 32) as u32,
        ],
        [seed as u32, (seed >> 32) as u32],
    );
    ((w[1] as u64) << 32) | w[0] as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known-answer tests from the Random123 distribution (kat_vectors, philox4x32_10).
    #[test]
    fn matches_random123_known_answers() {
        assert_eq!(
            philox4x32_10([0, 0, 0, 0], [0, 0]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }
}
