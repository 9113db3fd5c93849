//! The ELF code symbols BFD falls back on when DWARF does not name a function
//! (`_bfd_elf_find_function`), with its one-entry cache.

use super::strings::{StrId, Strings};

#[derive(Clone, Debug)]
struct ElfFunc {
    value: u64,
    size: u64,
    /// Interned when the symbol can be asked for (see [`ElfSymbols::name`]).
    name: Option<StrId>,
    /// The symbol's value in its own section, which BFD compares with where it means the
    /// code's offset (its cache, and the renaming of a DWARF function that starts there):
    /// for a PowerPC64 descriptor, its place in `.opd`, not its entry.
    cache_value: u64,
}

/// `_bfd_elf_find_function`'s view of `.text`.
#[derive(Debug)]
pub(super) struct ElfSymbols {
    /// Candidate symbols, in symbol-table order.
    funcs: Vec<ElfFunc>,
    /// `funcs` indices sorted by value.
    sorted: Vec<usize>,
    /// `_bfd_elf_find_function`'s one-entry cache: (offset range start, end, symbol).
    cache: Option<(u64, u64, usize)>,
    /// Whether a hit in `cache` always gives what a fresh search would (no code symbol's
    /// extent covers a later symbol's start): then only the name memory makes answers depend
    /// on the order of lookups.
    cache_transparent: bool,
    /// The address of `.text` (symbol values are offsets in it).
    pub(super) text_vma: u64,
}

impl Default for ElfSymbols {
    /// No symbols: every search fails, and the (unused) cache is transparent.
    fn default() -> ElfSymbols {
        ElfSymbols {
            funcs: Vec::new(),
            sorted: Vec::new(),
            cache: None,
            cache_transparent: true,
            text_vma: 0,
        }
    }
}

impl ElfSymbols {
    /// Code symbols of `.text` that `_bfd_elf_find_function` considers (the machine's
    /// `maybe_function_sym`, see [`crate::arch::function_symbols`]), in gprof's order,
    /// sorted but still unnamed, with the names to give them ([`ElfSymbols::name`]): the
    /// half of the reading that does not need to know which addresses will be looked up.
    /// `data`: the bytes `elf` was parsed from (PowerPC64 descriptors are read there);
    /// `synthetic`: [`crate::arch::synthetic_symbols`].
    pub(super) fn collect<'a>(
        elf: &goblin::elf::Elf<'a>,
        data: &'a [u8],
        synthetic: &'a crate::arch::Synthetic,
    ) -> (ElfSymbols, Vec<crate::arch::FunctionSym<'a>>) {
        let Some((text_idx, text)) = elf
            .section_headers
            .iter()
            .enumerate()
            .find(|(_, s)| elf.shdr_strtab.get_at(s.sh_name) == Some(".text"))
        else {
            return (ElfSymbols::default(), Vec::new());
        };
        let mut syms = ElfSymbols {
            text_vma: text.sh_addr,
            ..ElfSymbols::default()
        };
        let found = crate::arch::function_symbols(elf, data, text_idx, synthetic);
        syms.funcs = found
            .iter()
            .map(|f| ElfFunc {
                value: f.offset,
                size: f.size,
                name: None,
                cache_value: f.cache_value,
            })
            .collect();
        // By value, stably: (value, index) keys sorted are that order.
        let mut keys: Vec<(u64, usize)> = syms
            .funcs
            .iter()
            .enumerate()
            .map(|(i, f)| (f.value, i))
            .collect();
        keys.sort_unstable();
        syms.sorted = keys.into_iter().map(|(_, i)| i).collect();
        syms.cache_transparent =
            syms.cache_is_transparent() && syms.funcs.iter().all(|f| f.cache_value == f.value);
        (syms, found)
    }

    /// Names the symbols `found` by [`ElfSymbols::collect`].
    ///
    /// `only`: when these are the only addresses that will be looked up, and the cache is
    /// transparent (so that a lookup finds what a fresh search finds), only the names of the
    /// symbols found there are interned: a function-level run looks up a few hundred
    /// addresses, and interning every name of a 20,000-symbol table was half of this reading.
    pub(super) fn name(
        &mut self,
        found: &[crate::arch::FunctionSym<'_>],
        strings: &mut Strings,
        only: Option<&[u64]>,
    ) {
        match only.filter(|_| self.cache_transparent) {
            Some(addrs) => {
                for &a in addrs {
                    if let Some(i) = self.search(a.wrapping_sub(self.text_vma))
                        && let (Some(f), Some(s)) = (self.funcs.get_mut(i), found.get(i))
                        && f.name.is_none()
                    {
                        f.name = Some(strings.intern(&s.name));
                    }
                }
            }
            None => {
                for (f, s) in self.funcs.iter_mut().zip(found) {
                    f.name = Some(strings.intern(&s.name));
                }
            }
        }
    }

    /// See [`ElfSymbols::cache_transparent`].
    pub(super) fn cache_transparent(&self) -> bool {
        self.cache_transparent
    }

    /// The symbol `find_function` returned: its name and its value in its own section.
    /// `None` for a symbol whose name was not read (see [`ElfSymbols::name`]).
    pub(super) fn name_and_value(&self, i: usize) -> Option<(StrId, u64)> {
        self.funcs
            .get(i)
            .and_then(|s| Some((s.name?, s.cache_value)))
    }

    /// Every symbol's start and end address (where the symbol found may change).
    pub(super) fn breakpoints(&self) -> impl Iterator<Item = u64> + '_ {
        let vma = self.text_vma;
        self.funcs.iter().flat_map(move |f| {
            let start = f.value.wrapping_add(vma);
            [start, start.wrapping_add(f.size)]
        })
    }

    /// See [`ElfSymbols::cache_transparent`]: for each symbol value, the symbol a search
    /// picks there must end at or before the next symbol value.
    fn cache_is_transparent(&self) -> bool {
        let mut k = 0;
        while let Some(&first) = self.sorted.get(k) {
            let Some(value) = self.funcs.get(first).map(|f| f.value) else {
                return false;
            };
            let mut size = 0u64;
            while let Some(f) = self.sorted.get(k).and_then(|&i| self.funcs.get(i)) {
                if f.value != value {
                    break;
                }
                size = size.max(f.size);
                k += 1;
            }
            if let Some(next) = self.sorted.get(k).and_then(|&i| self.funcs.get(i))
                && next.value < value.saturating_add(size)
            {
                return false;
            }
        }
        true
    }

    /// `_bfd_elf_find_function` on `.text` at a section offset, with its cache.
    pub(super) fn find_function(&mut self, offset: u64) -> Option<usize> {
        if let Some((lo, hi, idx)) = self.cache
            && offset >= lo
            && offset < hi
        {
            return Some(idx);
        }
        let idx = self.search(offset)?;
        let f = self.funcs.get(idx)?;
        self.cache = Some((f.cache_value, f.cache_value.saturating_add(f.size), idx));
        Some(idx)
    }

    /// `_bfd_elf_find_function`'s search, without its cache.
    fn search(&self, offset: u64) -> Option<usize> {
        // The symbol with the greatest value <= offset; at equal values the first (in table
        // order) with the largest size.
        let n = self
            .sorted
            .partition_point(|&i| self.funcs.get(i).is_some_and(|f| f.value <= offset));
        let last = n.checked_sub(1)?;
        let best_value = self.funcs.get(*self.sorted.get(last)?)?.value;
        let mut best: Option<usize> = None;
        let mut best_size = 0u64;
        for &i in self.sorted.get(..n)?.iter().rev() {
            let f = self.funcs.get(i)?;
            if f.value != best_value {
                break;
            }
            // Table order: a later symbol replaces only with a strictly larger size, so among
            // equal sizes the lowest table index wins.
            if best.is_none() || f.size > best_size || (f.size == best_size && Some(i) < best) {
                best = Some(i);
                best_size = f.size;
            }
        }
        // BFD's scan also starts from low_func = 0 with func_size 0: a value-0 symbol qualifies.
        best
    }
}
