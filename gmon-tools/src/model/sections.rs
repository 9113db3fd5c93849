//! An ELF file's section table over its bytes, read without allocating: what the naming of
//! an object's functions (symbolize.rs) and of its PLT stubs (plt.rs) both read.

/// An ELF file's section headers over its bytes: a section's bytes and a section by name.
pub(super) struct Sections<'a, 'h> {
    data: &'a [u8],
    headers: &'h [goblin::elf::SectionHeader],
    names: &'a [u8],
}

impl<'a, 'h> Sections<'a, 'h> {
    pub fn new(data: &'a [u8], headers: &'h [goblin::elf::SectionHeader], shstrndx: usize) -> Self {
        let mut s = Sections {
            data,
            headers,
            names: &[],
        };
        s.names = headers
            .get(shstrndx)
            .and_then(|h| s.bytes(h))
            .unwrap_or_default();
        s
    }

    /// A section's bytes in the file (`None` for `SHT_NOBITS` or one past the end).
    pub fn bytes(&self, h: &goblin::elf::SectionHeader) -> Option<&'a [u8]> {
        if h.sh_type == goblin::elf::section_header::SHT_NOBITS {
            return None;
        }
        let o = usize::try_from(h.sh_offset).ok()?;
        let n = usize::try_from(h.sh_size).ok()?;
        self.data.get(o..o.checked_add(n)?)
    }

    /// The first section named `name` that has bytes in the file.
    pub fn named(&self, name: &str) -> Option<&'h goblin::elf::SectionHeader> {
        self.headers.iter().find(|h| {
            string_at(self.names, h.sh_name) == Some(name.as_bytes())
                && h.sh_type != goblin::elf::section_header::SHT_NOBITS
        })
    }

    /// The file's bytes.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The first symbol table of type `typ` (`SHT_SYMTAB`, `SHT_DYNSYM`) and its strings.
    pub fn symbol_table(
        &self,
        typ: u32,
        ctx: goblin::container::Ctx,
    ) -> Option<(goblin::elf::Symtab<'a>, &'a [u8])> {
        let h = self.headers.iter().find(|h| h.sh_type == typ)?;
        let strings = self
            .headers
            .get(usize::try_from(h.sh_link).ok()?)
            .and_then(|s| self.bytes(s))?;
        let entsize = usize::try_from(h.sh_entsize).ok().filter(|&e| e > 0)?;
        let count = usize::try_from(h.sh_size).ok()? / entsize;
        let syms =
            goblin::elf::Symtab::parse(self.data, usize::try_from(h.sh_offset).ok()?, count, ctx)
                .ok()?;
        Some((syms, strings))
    }
}

/// The NUL-terminated string at `offset` of a string table.
pub(super) fn string_at(strings: &[u8], offset: usize) -> Option<&[u8]> {
    let tail = strings.get(offset..)?;
    tail.split(|&b| b == 0).next()
}
