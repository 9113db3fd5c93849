#!/usr/bin/env python3
"""Write minimal ELF images for the examples of spec/ in other encodings.

GNU gprof takes the byte order and the pointer width of a gmon file from the
executable (ELF EI_DATA and EI_CLASS), never from the file. To show that the
big-endian and 32-bit examples (gnu-be32.gmon, gnu-be64.gmon, gnu-le32.gmon,
bsd44-be32.gmon, bsd-old-le32.gmon) are read correctly, gprof needs an executable
of the same encoding. gcc here only targets x86-64, and objcopy cannot change
byte order, so these images are built by hand: an ELF header, one zero-filled
.text section (SHF_ALLOC|SHF_EXECINSTR) at 0x1000..0x1340, a symbol table with
the functions of testdata/cases/ties-pie-O0/prog at their real addresses, and
no machine (EM_NONE), which BFD's generic elf32/64-big/little targets accept.

    ties-le32.elf  ties-be32.elf  ties-le64.elf  ties-be64.elf

`gprof -b ties-be32.elf gnu-be32.gmon` prints the same report as
`gprof -b ../cases/ties-pie-O0/prog gnu-le64.gmon` (checked by
gmon-format/tests/spec_examples.rs when /usr/bin/gprof exists).

Usage: testdata/spec/make-images.py
"""

import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

TEXT_ADDR = 0x1000
TEXT_SIZE = 0x340
# (name, address) of the global functions of ties-pie-O0 (nm prog | grep ' T ').
FUNCS = [
    ("zero_b", 0x11C9),
    ("zero_a", 0x11D6),
    ("work", 0x11E3),
    ("tie_b", 0x1240),
    ("tie_a", 0x126A),
    ("main", 0x1294),
]

STT_FUNC = 2
STB_GLOBAL = 1


def image(width, endian):
    e = "<" if endian == "le" else ">"
    is64 = width == 8

    shstrtab = b"\0.text\0.symtab\0.strtab\0.shstrtab\0"
    off_text_name = shstrtab.index(b".text")
    off_symtab_name = shstrtab.index(b".symtab")
    off_strtab_name = shstrtab.index(b".strtab")
    off_shstrtab_name = shstrtab.index(b".shstrtab")

    strtab = b"\0"
    name_offsets = []
    for name, _ in FUNCS:
        name_offsets.append(len(strtab))
        strtab += name.encode() + b"\0"

    def sym(name_off, value, size, info, shndx):
        if is64:
            return struct.pack(e + "IBBHQQ", name_off, info, 0, shndx, value, size)
        return struct.pack(e + "IIIBBH", name_off, value, size, info, 0, shndx)

    symtab = sym(0, 0, 0, 0, 0)
    for (name, addr), noff in zip(FUNCS, name_offsets):
        symtab += sym(noff, addr, 0, (STB_GLOBAL << 4) | STT_FUNC, 1)
    sym_size = len(symtab) // (len(FUNCS) + 1)

    ehsize = 64 if is64 else 52
    shentsize = 64 if is64 else 40
    text = b"\0" * TEXT_SIZE

    # Layout: ELF header, .text, .symtab, .strtab, .shstrtab, section headers.
    off_text = ehsize
    off_symtab = off_text + len(text)
    off_strtab = off_symtab + len(symtab)
    off_shstrtab = off_strtab + len(strtab)
    off_sh = (off_shstrtab + len(shstrtab) + 7) & ~7

    ident = b"\x7fELF" + bytes([2 if is64 else 1, 1 if endian == "le" else 2, 1, 0]) + b"\0" * 8
    ET_EXEC, EM_NONE = 2, 0
    if is64:
        hdr = ident + struct.pack(
            e + "HHIQQQIHHHHHH", ET_EXEC, EM_NONE, 1, 0, 0, off_sh, 0, ehsize, 0, 0, shentsize, 5, 4
        )
    else:
        hdr = ident + struct.pack(
            e + "HHIIIIIHHHHHH", ET_EXEC, EM_NONE, 1, 0, 0, off_sh, 0, ehsize, 0, 0, shentsize, 5, 4
        )

    def sh(name, typ, flags, addr, off, size, link, info, align, entsize):
        if is64:
            return struct.pack(e + "IIQQQQIIQQ", name, typ, flags, addr, off, size, link, info, align, entsize)
        return struct.pack(e + "IIIIIIIIII", name, typ, flags, addr, off, size, link, info, align, entsize)

    SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB = 1, 2, 3
    SHF_ALLOC, SHF_EXECINSTR = 2, 4
    shdrs = sh(0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    shdrs += sh(off_text_name, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, TEXT_ADDR, off_text, TEXT_SIZE, 0, 0, 16, 0)
    shdrs += sh(off_symtab_name, SHT_SYMTAB, 0, 0, off_symtab, len(symtab), 3, 1, width, sym_size)
    shdrs += sh(off_strtab_name, SHT_STRTAB, 0, 0, off_strtab, len(strtab), 0, 0, 1, 0)
    shdrs += sh(off_shstrtab_name, SHT_STRTAB, 0, 0, off_shstrtab, len(shstrtab), 0, 0, 1, 0)

    body = hdr + text + symtab + strtab + shstrtab
    body += b"\0" * (off_sh - len(body))
    return body + shdrs


def main():
    for width in (4, 8):
        for endian in ("le", "be"):
            name = f"ties-{endian}{width * 8}.elf"
            with open(os.path.join(HERE, name), "wb") as f:
                f.write(image(width, endian))
            print(name)


if __name__ == "__main__":
    main()
