//! A small seeded generator (xorshift64*) for tests' random values, so a
//! failure reproduces from the seed the test prints or fixes.

pub struct SeededRandom(u64);

impl SeededRandom {
    /// `seed` must not be zero (xorshift stays at zero forever).
    pub fn new(seed: u64) -> SeededRandom {
        assert_ne!(seed, 0, "a xorshift seed must not be zero");
        SeededRandom(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform enough below `bound` for tests (modulo bias ignored).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// In `-magnitude..=magnitude`.
    pub fn signed(&mut self, magnitude: i64) -> i64 {
        self.below(2 * magnitude as u64 + 1) as i64 - magnitude
    }

    /// Any finite double, from all bit patterns.
    pub fn finite_double(&mut self) -> f64 {
        loop {
            let value = f64::from_bits(self.next_u64());
            if value.is_finite() {
                return value;
            }
        }
    }

    /// Up to `length_max` random bytes.
    pub fn bytes(&mut self, length_max: u64) -> Vec<u8> {
        let length = self.below(length_max + 1);
        (0..length).map(|_| self.next_u64() as u8).collect()
    }
}
