//! A check of a shared object before `dlopen`: the dynamic loader maps the file's
//! segments and touches them, so one cut short (a half-copied install, a full disk) dies
//! with SIGBUS inside `dlopen` instead of failing. Checking that the file is a regular
//! ELF object of this machine's class and byte order whose headers, segments and section
//! table all lie within the file turns that into an error that names the file.

use crate::files::open_regular;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Why the file at `path` cannot be a loadable shared object, if it cannot.
pub fn library_problem(path: &Path) -> Option<String> {
    let (file, len) = match open_regular(path) {
        Ok(x) => x,
        Err(e) => return Some(e.to_string()),
    };
    let read = |at: u64, n: usize| -> Option<Vec<u8>> {
        let end = at.checked_add(n as u64)?;
        if end > len {
            return None;
        }
        let mut buf = vec![0u8; n];
        file.read_exact_at(&mut buf, at).ok()?;
        Some(buf)
    };
    elf_problem(len, read)
}

/// [`library_problem`] of an object of `len` bytes that `read(offset, n)` reads from
/// (`None` past the end).
pub fn elf_problem(len: u64, read: impl Fn(u64, usize) -> Option<Vec<u8>>) -> Option<String> {
    let Some(ident) = read(0, 16) else {
        return Some(format!(
            "it is {len} bytes long, too short for an ELF header"
        ));
    };
    if &ident[..4] != b"\x7fELF" {
        return Some("it is not an ELF file".into());
    }
    let is64 = match ident[4] {
        1 => false,
        2 => true,
        _ => return Some("its ELF class is invalid".into()),
    };
    let little = match ident[5] {
        1 => true,
        2 => false,
        _ => return Some("its ELF byte order is invalid".into()),
    };
    if is64 != cfg!(target_pointer_width = "64") || little != cfg!(target_endian = "little") {
        return Some("it is an ELF object for another kind of machine".into());
    }
    let header_len = if is64 { 64 } else { 52 };
    let Some(h) = read(0, header_len) else {
        return Some(format!(
            "it is {len} bytes long, shorter than its ELF header"
        ));
    };
    let u16_at = |b: &[u8], o: usize| {
        let x = [b[o], b[o + 1]];
        u64::from(if little {
            u16::from_le_bytes(x)
        } else {
            u16::from_be_bytes(x)
        })
    };
    let u32_at = |b: &[u8], o: usize| {
        let x = [b[o], b[o + 1], b[o + 2], b[o + 3]];
        u64::from(if little {
            u32::from_le_bytes(x)
        } else {
            u32::from_be_bytes(x)
        })
    };
    let u64_at = |b: &[u8], o: usize| {
        let mut x = [0u8; 8];
        x.copy_from_slice(&b[o..o + 8]);
        if little {
            u64::from_le_bytes(x)
        } else {
            u64::from_be_bytes(x)
        }
    };
    let word = |b: &[u8], o32: usize, o64: usize| {
        if is64 {
            u64_at(b, o64)
        } else {
            u32_at(b, o32)
        }
    };
    let (phoff, shoff) = (word(&h, 28, 32), word(&h, 32, 40));
    let (ph_at, sh_at) = if is64 { (54, 58) } else { (42, 46) };
    let (phentsize, phnum) = (u16_at(&h, ph_at), u16_at(&h, ph_at + 2));
    let (shentsize, shnum) = (u16_at(&h, sh_at), u16_at(&h, sh_at + 2));
    let cut = |what: &str, end: u64| {
        Some(format!(
            "it is cut short: {len} bytes, but its {what} ends at byte {end}"
        ))
    };
    let table_end = |off: u64, size: u64, n: u64| off.checked_add(size.checked_mul(n)?);
    let Some(sh_end) = table_end(shoff, shentsize, shnum) else {
        return Some("its section table is invalid".into());
    };
    if shnum > 0 && sh_end > len {
        return cut("section table", sh_end);
    }
    let Some(ph_end) = table_end(phoff, phentsize, phnum) else {
        return Some("its program header table is invalid".into());
    };
    if phnum == 0 || phentsize < if is64 { 56 } else { 32 } {
        return Some("it has no program headers: not a shared object".into());
    }
    let Some(ph) = read(phoff, (ph_end - phoff) as usize) else {
        return cut("program header table", ph_end);
    };
    for i in 0..phnum as usize {
        let p = &ph[i * phentsize as usize..];
        let (offset, filesz) = if is64 {
            (u64_at(p, 8), u64_at(p, 32))
        } else {
            (u32_at(p, 4), u32_at(p, 16))
        };
        match offset.checked_add(filesz) {
            Some(end) if end <= len => {}
            Some(end) => return cut("segment", end),
            None => return Some("a segment of it is invalid".into()),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test binary is an ELF object of this machine; every cut of it is refused.
    #[test]
    fn a_library_cut_short_is_named_and_a_whole_one_passes() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let of = |bytes: &[u8]| {
            let len = bytes.len() as u64;
            elf_problem(len, |at, n| {
                let end = usize::try_from(at).ok()?.checked_add(n)?;
                bytes.get(at as usize..end).map(<[u8]>::to_vec)
            })
        };
        assert_eq!(of(&exe), None);
        for cut in [0, 10, 40, 300, exe.len() / 2, exe.len() - 1] {
            let why = of(&exe[..cut]).unwrap_or_else(|| panic!("cut at {cut} passed"));
            assert!(!why.is_empty());
        }
        assert!(
            of(b"garbage that is long enough to hold an ELF header, but is not one")
                .unwrap()
                .contains("not an ELF")
        );
        let dir = tempfile::tempdir().unwrap();
        let short = dir.path().join("short.so");
        std::fs::write(&short, &exe[..exe.len() / 3]).unwrap();
        assert!(library_problem(&short).unwrap().contains("cut short"));
        let fifo = dir.path().join("fifo.so");
        crate::faults::make_fifo(&fifo);
        assert!(library_problem(&fifo).unwrap().contains("FIFO"));
    }
}
