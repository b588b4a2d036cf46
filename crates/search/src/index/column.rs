//! Per-ordinal values that many boards never set (a category, a location, a salary):
//! none of their bytes are held until some job has one.

/// A value with a "none" that a [`Column`] need not hold.
pub(super) trait Value: Copy {
    const NONE: Self;
    fn is_none(self) -> bool;
}

impl Value for u16 {
    const NONE: u16 = 0;
    fn is_none(self) -> bool {
        self == 0
    }
}

impl Value for u32 {
    const NONE: u32 = 0;
    fn is_none(self) -> bool {
        self == 0
    }
}

impl Value for f64 {
    const NONE: f64 = f64::NAN;
    fn is_none(self) -> bool {
        self.is_nan()
    }
}

/// A value by ordinal: empty while every ordinal has none, then one per ordinal.
#[derive(Debug)]
pub(super) struct Column<T> {
    values: Vec<T>,
}

impl<T: Value> Column<T> {
    pub(super) fn new() -> Column<T> {
        Column { values: Vec::new() }
    }

    /// Ordinal `o`'s value.
    #[inline]
    pub(super) fn get(&self, o: u32) -> T {
        self.values.get(o as usize).copied().unwrap_or(T::NONE)
    }

    /// Gives ordinal `o` value `v`; `len` ordinals exist (`o` below it) and `capacity`
    /// are reserved, which a column's first value takes too.
    pub(super) fn set(&mut self, o: u32, v: T, len: usize, capacity: usize) {
        let o = o as usize;
        if o < self.values.len() {
            self.values[o] = v;
        } else if !v.is_none() {
            self.values.reserve_exact(capacity.max(len));
            self.values.resize(len, T::NONE);
            self.values[o] = v;
        }
    }

    /// One more ordinal, with none.
    pub(super) fn push_none(&mut self) {
        if !self.values.is_empty() {
            self.values.push(T::NONE);
        }
    }

    pub(super) fn reserve_exact(&mut self, more: usize) {
        if !self.values.is_empty() {
            self.values.reserve_exact(more);
        }
    }

    pub(super) fn shrink_to_fit(&mut self) {
        self.values.shrink_to_fit();
    }

    /// The bytes held on the heap.
    pub(super) fn heap_bytes(&self) -> usize {
        self.values.capacity() * std::mem::size_of::<T>()
    }
}
