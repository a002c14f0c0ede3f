//! xorshift64*: deterministic pseudo-random inputs without a dependency. Included by path
//! (`#[path = ".../tests/common/rng.rs"] mod rng;`) from the tests and benches that draw
//! inputs; a file that needs more (`below`, `bytes`) adds it in an `impl Rng` of its own.

/// The generator's state; seed it with any nonzero value.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}
