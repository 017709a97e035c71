//! The hash GPU kernels give a string, shared by the host code that must agree with them.

/// FNV-1a's 64-bit offset basis and prime (the prelude's `STR_HASH_BASIS` and
/// `STR_HASH_PRIME` are defined from these).
pub const FNV_OFFSET_BASIS: u64 = 0xcbf29ce484222325;
pub const FNV_PRIME: u64 = 0x100000001b3;

/// `str_hash32` of the CUDA prelude: 64-bit FNV-1a over the bytes, folded to 32 bits, the
/// low bit set so that 0 can mean "not known". Dictionary values (whose `Str` records
/// carry it) and string literals (compiled in with it) hash on the host; other strings
/// on the GPU. The two must agree, or equal strings would hash apart.
pub fn str_hash32(bytes: &[u8]) -> u32 {
    let mut h: u64 = FNV_OFFSET_BASIS;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(FNV_PRIME);
    }
    ((h ^ (h >> 32)) as u32) | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_folded() {
        // FNV-1a 64 of "" is its offset basis; of "a" a published test vector.
        assert_eq!(str_hash32(b""), ((0xcbf29ce484222325u64 ^ (0xcbf29ce484222325u64 >> 32)) as u32) | 1);
        let a = 0xaf63dc4c8601ec8cu64;
        assert_eq!(str_hash32(b"a"), ((a ^ (a >> 32)) as u32) | 1);
    }
}
