//! xorshift64*: a small deterministic generator for generated data and test inputs, whose
//! draws never change with a crate's version (the data and the inputs must not).

pub struct XorShift64Star(pub u64);

impl XorShift64Star {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
