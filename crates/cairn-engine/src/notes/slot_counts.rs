//! Per-slot counters of a posting block's 128 slots, kept as bit planes (plane `p` holds bit `p`
//! of every slot's count), so that adding a posting mask or comparing every slot with a threshold
//! costs a few 128-bit operations rather than one step per slot. The trigram channel
//! (`lookup.rs`) counts how many query trigrams each note of a block holds: a common trigram sets
//! most of a block's slots, and the slot-by-slot counting and pruning this replaces was the
//! largest share of a two-word query's lookup.

/// Enough planes for any count a query makes: a query's trigrams number below 4096 (its length
/// is at most 4096 bytes), and counts stop growing at `u16::MAX` as the `u16` counters they
/// replace did.
const PLANES: usize = 16;

#[derive(Debug, Clone, Default)]
pub(crate) struct SlotCounts {
    planes: [u128; PLANES],
    /// Planes in use: every plane from `used` on is zero.
    used: usize,
}

impl SlotCounts {
    /// Adds one to the count of every slot set in `mask`.
    pub(crate) fn add(&mut self, mask: u128) {
        let mut carry = mask;
        for p in 0..PLANES {
            if carry == 0 {
                return;
            }
            let plane = self.planes[p];
            self.planes[p] = plane ^ carry;
            carry &= plane;
            self.used = self.used.max(p + 1);
        }
        // Past the top plane: those slots were at `u16::MAX`; keep them there (saturate).
        for plane in &mut self.planes {
            *plane |= carry;
        }
    }

    /// The slots whose count is at least `t`.
    pub(crate) fn at_least(&self, t: u32) -> u128 {
        if t == 0 {
            return !0;
        }
        if t >= 1 << self.used {
            return 0;
        }
        // From the top plane down: `gt` holds the slots already known greater than `t`, `eq`
        // those equal to it so far.
        let (mut gt, mut eq) = (0u128, !0u128);
        for p in (0..self.used).rev() {
            let plane = self.planes[p];
            if (t >> p) & 1 == 1 {
                eq &= plane;
            } else {
                gt |= eq & plane;
                eq &= !plane;
            }
        }
        gt | eq
    }

    /// The count of `slot`.
    pub(crate) fn get(&self, slot: u8) -> u16 {
        let bit = |p: usize| u16::from((self.planes[p] >> slot) & 1 == 1) << p;
        (0..self.used).map(bit).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng, rngs::StdRng};

    #[test]
    fn counts_and_thresholds_equal_plain_counters() {
        let mut rng = StdRng::seed_from_u64(11);
        for _ in 0..200 {
            let mut planes = SlotCounts::default();
            let mut plain = [0u16; 128];
            for _ in 0..rng.random_range(0..40) {
                // Sparse, dense and empty masks alike.
                let mask = match rng.random_range(0..3) {
                    0 => rng.random::<u128>() & rng.random::<u128>() & rng.random::<u128>(),
                    1 => rng.random::<u128>() | rng.random::<u128>(),
                    _ => 0,
                };
                planes.add(mask);
                for (slot, count) in plain.iter_mut().enumerate() {
                    *count += u16::from((mask >> slot) & 1 == 1);
                }
            }
            for slot in 0..128u8 {
                assert_eq!(planes.get(slot), plain[usize::from(slot)]);
            }
            for t in 0..45 {
                let want = (0..128).filter(|&s| u32::from(plain[s]) >= t).fold(0u128, |m, s| m | 1 << s);
                assert_eq!(planes.at_least(t), want, "threshold {t}");
            }
        }
    }

    #[test]
    fn counts_saturate_at_the_top() {
        let mut planes = SlotCounts::default();
        for _ in 0..u32::from(u16::MAX) + 3 {
            planes.add(0b10);
        }
        assert_eq!(planes.get(1), u16::MAX);
        assert_eq!(planes.get(0), 0);
        assert_eq!(planes.at_least(u32::from(u16::MAX)), 0b10);
    }
}
