//! Reading PTX text: an entry's parameter sizes and the parameter record `#[kernel]` leaves
//! beside it (to check a kernel's declaration against the module it launches from), and the
//! driver version a module's `.version` needs.
//!
//! The text may come from anywhere: malformed text is a typed error, never a panic or a
//! wrapped size (a wrong size here would let a mismatched declaration through).

/// Why an entry's parameter sizes could not be read from PTX text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamsError {
    /// The text declares no `.entry` of this name.
    NoEntry,
    /// The entry is declared, but its parameter list is not understood: why.
    Unreadable(&'static str),
}

/// `param_sizes_in` of PTX text with its comments.
#[cfg(test)]
pub(crate) fn param_sizes(ptx: &str, name: &str) -> Result<Vec<usize>, ParamsError> {
    param_sizes_in(&strip_comments(ptx), name)
}

/// The sizes in bytes of entry `name`'s parameters in PTX text without comments
/// ([`strip_comments`]).
///
/// Malformed text is an error, never a panic or a wrapped size: the text may come from
/// anywhere, and a wrong size here would let a mismatched declaration through.
fn param_sizes_in(text: &str, name: &str) -> Result<Vec<usize>, ParamsError> {
    let list = entry_param_list(text, name)?;
    let mut sizes = Vec::new();
    for decl in list.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let mut toks = decl.split_whitespace();
        if toks.next() != Some(".param") {
            return Err(ParamsError::Unreadable("a parameter not declared `.param`"));
        }
        let mut elem: Option<usize> = None;
        let mut count = 1usize;
        for tok in toks {
            let size = match tok {
                ".b8" | ".u8" | ".s8" => Some(1),
                ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => Some(2),
                ".b32" | ".u32" | ".s32" | ".f32" => Some(4),
                ".b64" | ".u64" | ".s64" | ".f64" => Some(8),
                ".b128" => Some(16),
                _ => None,
            };
            if elem.is_none() {
                elem = size;
            }
            if let Some(open) = tok.find('[') {
                let n = tok[open + 1..].strip_suffix(']').and_then(|n| n.parse().ok());
                count = n.ok_or(ParamsError::Unreadable("a parameter's array length"))?;
            }
        }
        let elem = elem.ok_or(ParamsError::Unreadable("a parameter of no known type"))?;
        let size = elem.checked_mul(count).ok_or(ParamsError::Unreadable("a parameter's size overflows"))?;
        sizes.push(size);
    }
    Ok(sizes)
}

/// One declared kernel parameter as the device build recorded it (`sluice_device::abi`):
/// name, kind (`r` read-only slice, `m` written slice, `t` TMA matrix, `p`/`q` const/mut pointer, `v`
/// value) and the size and alignment of its element or value type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbiParam {
    /// The parameter's name in the kernel's signature.
    pub name: String,
    /// Its kind letter.
    pub kind: u8,
    /// `size_of` of its element (slices, pointers) or value type, on the device.
    pub size: usize,
    /// `align_of` of the same type, on the device.
    pub align: usize,
}

/// What the PTX says of one entry's parameters: their sizes, and the record `#[kernel]`
/// left beside the entry (`None` for PTX written by hand or by another compiler).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntryParams {
    pub(crate) sizes: Vec<usize>,
    pub(crate) abi: Option<Vec<AbiParam>>,
    /// What `#[kernel(..)]` promised of every launch (`dims = 1`, `block = ..`), which the
    /// device build assumes.
    pub(crate) launch: LaunchRecord,
}

/// The header of the record (`sluice_device::abi::HEADER`).
const ABI_HEADER: &str = "sluice-abi 1;";

/// The sizes of entry `name`'s parameters and its `#[kernel]` record, if the text has one.
pub(crate) fn entry_params(ptx: &str, name: &str) -> Result<EntryParams, ParamsError> {
    entry_params_in(ptx, &strip_comments(ptx), name)
}

/// [`entry_params`], given also `ptx` without comments (`text`).
fn entry_params_in(ptx: &str, text: &str, name: &str) -> Result<EntryParams, ParamsError> {
    let sizes = param_sizes_in(text, name)?;
    let abi = abi_record(ptx, name)?;
    let launch = launch_record(ptx, name)?;
    Ok(EntryParams { sizes, abi, launch })
}

/// [`entry_params`] and the [`EntryLimits`], with one pass that removes the comments: what
/// resolving a kernel reads of its entry.
pub(crate) fn entry_info(ptx: &str, name: &str) -> (Result<EntryParams, ParamsError>, EntryLimits) {
    let text = strip_comments(ptx);
    (entry_params_in(ptx, &text, name), entry_limits_in(&text, name))
}

/// The bytes of the global `.visible .global .align 1 .b8 SYMBOL[N] = {b0, b1, ...};`
/// (`SYMBOL` given with its `[`), or `None` if the text has no such global; `bad` if it has
/// one whose bytes do not read.
fn byte_global(ptx: &str, symbol: &str, bad: ParamsError) -> Result<Option<Vec<u8>>, ParamsError> {
    let Some(at) = ptx.find(symbol) else { return Ok(None) };
    let rest = &ptx[at + symbol.len()..];
    let open = rest.find('{').ok_or(bad)?;
    let close = rest[open..].find('}').ok_or(bad)? + open;
    let mut bytes = Vec::new();
    for b in rest[open + 1..close].split(',') {
        bytes.push(b.trim().parse::<u8>().map_err(|_| bad)?);
    }
    Ok(Some(bytes))
}

/// The record `#[kernel]` emitted for entry `name`: the global
/// `.visible .global .align 1 .b8 __sluice_abi_NAME[N] = {b0, b1, ...};`, decoded.
/// `Ok(None)` when the text has no such global; an error when it has one that does not
/// decode (it is then not trusted, and nothing is launched).
fn abi_record(ptx: &str, name: &str) -> Result<Option<Vec<AbiParam>>, ParamsError> {
    let bad = ParamsError::Unreadable("the kernel's parameter record (`__sluice_abi_*`)");
    match byte_global(ptx, &format!("__sluice_abi_{name}["), bad)? {
        Some(bytes) => decode_abi(&bytes).map(Some).ok_or(bad),
        None => Ok(None),
    }
}

/// What `#[kernel(..)]` promised of every launch of an entry: its record
/// `__sluice_launch_NAME`, `;`-terminated fields, each at most once — `dims=1` (every launch
/// is 1-D) and `block=X,Y,Z` (every block is `(X, Y, Z)`). A record that says anything else
/// is an error (the device build may assume what it says, so a record this host does not
/// understand is not launched). No record: no promise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LaunchRecord {
    pub(crate) one_d: bool,
    pub(crate) block: Option<(u32, u32, u32)>,
}

fn launch_record(ptx: &str, name: &str) -> Result<LaunchRecord, ParamsError> {
    let bad = ParamsError::Unreadable("the kernel's launch record (`__sluice_launch_*`)");
    let Some(bytes) = byte_global(ptx, &format!("__sluice_launch_{name}["), bad)? else {
        return Ok(LaunchRecord::default());
    };
    let text = std::str::from_utf8(&bytes).map_err(|_| bad)?;
    let body = text.strip_suffix(';').ok_or(bad)?;
    let mut out = LaunchRecord::default();
    for field in body.split(';') {
        match field.split_once('=').ok_or(bad)? {
            ("dims", "1") if !out.one_d => out.one_d = true,
            ("block", dims) if out.block.is_none() => {
                let mut it = dims.split(',').map(|d| d.parse::<u32>().ok().filter(|&d| d >= 1));
                let (Some(Some(x)), Some(Some(y)), Some(Some(z)), None) = (it.next(), it.next(), it.next(), it.next())
                else {
                    return Err(bad);
                };
                if x as u64 * y as u64 * z as u64 > 1024 {
                    return Err(bad);
                }
                out.block = Some((x, y, z));
            }
            _ => return Err(bad),
        }
    }
    // A 1-D kernel's block is `(m, 1, 1)`.
    if out.one_d && out.block.is_some_and(|(_, y, z)| (y, z) != (1, 1)) {
        return Err(bad);
    }
    Ok(out)
}

/// Decodes a record (`sluice_device::abi`'s format); `None` if it is not one.
pub fn decode_abi(bytes: &[u8]) -> Option<Vec<AbiParam>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut rest = text.strip_prefix(ABI_HEADER)?;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (field, tail) = rest.split_once(';')?;
        rest = tail;
        let mut parts = field.split(':');
        let (name, kind, size, align) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || name.is_empty() || kind.len() != 1 || !b"rmtpqv".contains(&kind.as_bytes()[0]) {
            return None;
        }
        let hex = |h: &str| if h.len() == 8 { usize::from_str_radix(h, 16).ok() } else { None };
        out.push(AbiParam { name: name.to_string(), kind: kind.as_bytes()[0], size: hex(size)?, align: hex(align)? });
    }
    Some(out)
}

/// The names of the `.entry` functions declared in PTX text, in order (malformed
/// declarations are skipped: the driver reports them when it loads the text).
pub(crate) fn entries(ptx: &str) -> Vec<String> {
    let text = strip_comments(ptx);
    let is_ident = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%');
    let mut names = Vec::new();
    let mut rest: &str = &text;
    while let Some(at) = rest.find(".entry") {
        let before_ok = at == 0 || !is_ident(rest[..at].chars().next_back().unwrap_or(' '));
        rest = &rest[at + ".entry".len()..];
        if !before_ok || !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let name: String = rest.trim_start().chars().take_while(|&c| is_ident(c)).collect();
        if !name.is_empty() {
            names.push(name);
        }
    }
    names
}

/// The text between the parentheses of `.entry name ( ... )`: empty for an entry declared
/// without a parameter list.
fn entry_param_list<'t>(text: &'t str, name: &str) -> Result<&'t str, ParamsError> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%');
    let mut rest = text;
    while let Some(at) = rest.find(".entry") {
        let before = text[..text.len() - rest.len() + at].chars().next_back();
        rest = &rest[at + ".entry".len()..];
        if before.is_some_and(|c| is_ident(c) || c == '.') || !rest.starts_with(char::is_whitespace) {
            continue; // part of a longer word, such as `.entry_x`
        }
        let after = rest.trim_start();
        let ident_len = after.find(|c: char| !is_ident(c)).unwrap_or(after.len());
        if &after[..ident_len] != name {
            continue;
        }
        let after = after[ident_len..].trim_start();
        let Some(list) = after.strip_prefix('(') else { return Ok("") };
        let close = list.find(')').ok_or(ParamsError::Unreadable("an unclosed parameter list"))?;
        return Ok(&list[..close]);
    }
    Err(ParamsError::NoEntry)
}

/// What an entry declares of its blocks: the most
/// threads per block (`.maxntid x[, y[, z]]` after its parameter list:
/// `#[kernel(max_threads = N)]`, CUDA C++'s `__launch_bounds__`) — what the CPU backend
/// enforces as a GPU's driver does — and the block size it must be launched with, if it sets
/// register budgets (`setmaxnreg`, `sluice_device::tma::WsPipeline::run`): its `.maxntid`.
/// The budgets share the register file that ptxas sized for that many threads (a block of
/// other size has another pool, in which an increase may wait for ever).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct EntryLimits {
    /// `None`: no `.maxntid`.
    pub(crate) max_threads: Option<u32>,
    /// `None`: any block size.
    pub(crate) exact_threads: Option<u32>,
}

/// `entry_limits_in` of PTX text with its comments.
#[cfg(test)]
pub(crate) fn entry_limits(ptx: &str, name: &str) -> EntryLimits {
    entry_limits_in(&strip_comments(ptx), name)
}

/// The [`EntryLimits`] of entry `name` in text without comments.
fn entry_limits_in(text: &str, name: &str) -> EntryLimits {
    let Ok(list) = entry_param_list(text, name) else { return EntryLimits::default() };
    // `list` is a slice of `text` (an entry without a list gives a static "": none then):
    // its end is where the list closes.
    let Some(at) = (list.as_ptr() as usize).checked_sub(text.as_ptr() as usize).map(|a| a + list.len()) else {
        return EntryLimits::default();
    };
    let Some(rest) = text.get(at..) else { return EntryLimits::default() };
    // The directives between the list's `)` and the body's `{`.
    let head = rest.split('{').next().unwrap_or("");
    let max_threads = head.split(".maxntid").nth(1).and_then(|d| d.split('.').next()).and_then(|dims| {
        dims.split(',').map(|d| d.trim().parse::<u32>().ok()).try_fold(1u32, |n, d| n.checked_mul(d?))
    });
    // The entry's body: up to the next function or entry of the module.
    let end = [rest.find(".entry"), rest.find(".func")].into_iter().flatten().min().unwrap_or(rest.len());
    let exact_threads = max_threads.filter(|_| rest[..end].contains("setmaxnreg"));
    EntryLimits { max_threads, exact_threads }
}

/// [`EntryLimits::max_threads`] alone.
#[cfg(test)]
pub(crate) fn max_threads(ptx: &str, name: &str) -> Option<u32> {
    entry_limits(ptx, name).max_threads
}

/// [`EntryLimits::exact_threads`] alone.
#[cfg(test)]
pub(crate) fn exact_threads(ptx: &str, name: &str) -> Option<u32> {
    entry_limits(ptx, name).exact_threads
}

/// `ptx` without its `//` and `/* */` comments (each replaced by a space), so that a
/// commented-out declaration is not taken for the entry's.
fn strip_comments(ptx: &str) -> std::borrow::Cow<'_, str> {
    if !ptx.contains("//") && !ptx.contains("/*") {
        return ptx.into();
    }
    // One pass: each search starts where the last comment ended and stops at the first `/`
    // (searching for `//` and `/*` separately from every comment would read the rest of the
    // text again for each: a module of a megabyte with thousands of comments took seconds).
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    while let Some(at) = rest.find('/') {
        let after = &rest[at + 1..];
        let end = if after.starts_with('/') {
            after.find('\n').map_or(rest.len(), |e| at + 1 + e)
        } else if let Some(body) = after.strip_prefix('*') {
            body.find("*/").map_or(rest.len(), |e| at + 2 + e + 2)
        } else {
            // A `/` that opens no comment stays as written.
            out.push_str(&rest[..at + 1]);
            rest = after;
            continue;
        };
        out.push_str(&rest[..at]);
        out.push(' ');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.into()
}

/// The `.version` a PTX module declares, as written (`"?"` if none).
pub(crate) fn version(ptx: &str) -> String {
    ptx.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix(".version"))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| "?".into())
}

/// The driver version a PTX module's `.version` needs, if known (`None` for a version
/// this table does not know, or malformed text).
pub(crate) fn needs_driver(ptx: &str) -> Option<u32> {
    let line = ptx.lines().map(str::trim).find(|l| l.starts_with(".version"))?;
    let v = line.strip_prefix(".version")?.trim();
    let (major, minor) = v.split_once('.')?;
    let (major, minor): (u32, u32) = (major.trim().parse().ok()?, minor.trim().parse().ok()?);
    // Checked: a minor such as 500000000 must not overflow into a small, wrong version.
    let cuda = |base: u32, m: u32| m.checked_mul(10)?.checked_add(base);
    // PTX ISA → CUDA: 7.m → 11.m; 8.0-8.5 → 12.0-12.5; 8.6 → 12.7; 8.7 → 12.8; 8.8 → 12.9; 9.m → 13.m.
    match (major, minor) {
        (7, m) => cuda(11000, m),
        (8, m @ 0..=5) => cuda(12000, m),
        (8, 6) => Some(12070),
        (8, 7) => Some(12080),
        (8, 8) => Some(12090),
        (9, m) => cuda(13000, m),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_record_beside_an_entry_is_read_back() {
        let ptx = format!(
            "{PTX}\n.visible .global .align 1 .b8 __sluice_abi_fill_column[{}] = {{{}}};\n",
            RECORD.len(),
            RECORD.bytes().map(|b| b.to_string()).collect::<Vec<_>>().join(", ")
        );
        let found = entry_params(&ptx, "fill_column").unwrap();
        assert_eq!(found.sizes, vec![8, 8, 4]);
        let abi = found.abi.expect("a record");
        assert_eq!(abi[0], AbiParam { name: "out".into(), kind: b'm', size: 4, align: 4 });
        assert_eq!(abi[1], AbiParam { name: "value".into(), kind: b'v', size: 4, align: 4 });
        // No record: hand-written PTX; a record that does not decode: refused.
        assert_eq!(entry_params(PTX, "fill_column").unwrap().abi, None);
        let broken = format!("{PTX}\n.visible .global .align 1 .b8 __sluice_abi_fill_column[3] = {{1, 2, 3}};\n");
        assert!(matches!(entry_params(&broken, "fill_column"), Err(ParamsError::Unreadable(_))));
        let overflow = format!("{PTX}\n.visible .global .align 1 .b8 __sluice_abi_fill_column[1] = {{300}};\n");
        assert!(matches!(entry_params(&overflow, "fill_column"), Err(ParamsError::Unreadable(_))));
    }

    const RECORD: &str = "sluice-abi 1;out:m:00000004:00000004;value:v:00000004:00000004;";

    #[test]
    fn the_launch_record_is_read_and_nothing_else_is_trusted() {
        let record = |name: &str, bytes: &[u8]| {
            let list = bytes.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", ");
            format!("{PTX}\n.visible .global .align 1 .b8 __sluice_launch_{name}[{}] = {{{list}}};\n", bytes.len())
        };
        assert!(!entry_params(PTX, "fill_column").unwrap().launch.one_d, "no record: any launch shape");
        assert!(entry_params(&record("fill_column", b"dims=1;"), "fill_column").unwrap().launch.one_d);
        // Another kernel's record (a longer name sharing the prefix included) says nothing of this one.
        assert!(!entry_params(&record("fill_column2", b"dims=1;"), "fill_column").unwrap().launch.one_d);
        assert!(!entry_params(&record("fill", b"dims=1;"), "fill_column").unwrap().launch.one_d);
        // A record this host does not understand: the device may assume it, so it is refused.
        let both = entry_params(&record("fill_column", b"dims=1;block=256,1,1;"), "fill_column").unwrap();
        assert_eq!((both.launch.one_d, both.launch.block), (true, Some((256, 1, 1))));
        let block = entry_params(&record("fill_column", b"block=32,8,1;"), "fill_column").unwrap();
        assert_eq!((block.launch.one_d, block.launch.block), (false, Some((32, 8, 1))));
        for bad in [
            &b"dims=2;"[..],
            b"dims=1",
            b"",
            b";",
            b"dims=1;dims=1;",
            b"block=32,8;",
            b"block=32,8,1,1;",
            b"block=0,8,1;",
            b"block=64,32,1;",
            b"block=32,8,1;block=32,8,1;",
            b"dims=1;block=32,8,1;",
            b"block=32,8,1;dims=1;",
            b"block=32,x,1;",
            b"shiny=1;",
        ] {
            let r = entry_params(&record("fill_column", bad), "fill_column");
            assert!(matches!(r, Err(ParamsError::Unreadable(_))), "{:?}: {r:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn malformed_records_do_not_decode() {
        assert!(decode_abi(RECORD.as_bytes()).is_some());
        assert_eq!(decode_abi(b"sluice-abi 1;"), Some(vec![]));
        for bad in [
            "sluice-abi 2;",
            "sluice-abi 1;out:m:00000004:00000004",
            "sluice-abi 1;out:x:00000004:00000004;",
            "sluice-abi 1;:m:00000004:00000004;",
            "sluice-abi 1;out:m:4:4;",
            "sluice-abi 1;out:m:0000000g:00000004;",
            "sluice-abi 1;out:m:00000004:00000004:1;",
        ] {
            assert_eq!(decode_abi(bad.as_bytes()), None, "{bad}");
        }
    }

    const PTX: &str = r#"
.version 7.8
.target sm_90
.address_size 64
.visible .entry fill_column(
	.param .u64 .ptr .align 1 fill_column_param_0,
	.param .u64 fill_column_param_1,
	.param .f32 fill_column_param_2
)
{ ret; }
.visible .entry with_struct(
	.param .u64 with_struct_param_0,
	.param .align 4 .b8 with_struct_param_1[16]
)
{ ret; }
"#;

    #[test]
    fn ptx_signatures_are_parsed() {
        assert_eq!(param_sizes(PTX, "fill_column"), Ok(vec![8, 8, 4]));
        assert_eq!(param_sizes(PTX, "with_struct"), Ok(vec![8, 16]));
        assert_eq!(param_sizes(PTX, "fill"), Err(ParamsError::NoEntry));
        assert_eq!(needs_driver(PTX), Some(11080));
    }

    #[test]
    fn comments_of_both_kinds_become_spaces_and_nothing_else_changes() {
        let ptx = "a / b // one\n/* two\n */c/d/* unclosed";
        assert_eq!(strip_comments(ptx), "a / b  \n c/d ");
        assert_eq!(strip_comments("// only"), " ");
        assert_eq!(strip_comments("x /* a */ /* b */ y // c"), "x     y  ");
        assert!(matches!(strip_comments("no comment / here"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn ptx_entries_are_found_by_whole_name_outside_comments() {
        let ptx = "// .visible .entry k(\n.param .f64 fake\n)\n/* .entry k(.param .f64 fake) */\n\
                   .visible .entry k_long(\n.param .f64 a\n)\n{ ret; }\n\
                   .visible .entry k(\n.param .u32 a\n)\n{ ret; }\n\
                   .visible .entry noargs\n{ ret; }\n.visible .entry empty()\n{ ret; }";
        assert_eq!(param_sizes(ptx, "k"), Ok(vec![4]));
        assert_eq!(param_sizes(ptx, "k_long"), Ok(vec![8]));
        assert_eq!(param_sizes(ptx, "noargs"), Ok(vec![]));
        assert_eq!(param_sizes(ptx, "empty"), Ok(vec![]));
        assert_eq!(param_sizes(ptx, "k_"), Err(ParamsError::NoEntry));
    }

    #[test]
    fn malformed_ptx_is_an_error_not_a_panic() {
        let unreadable = |ptx: &str| match param_sizes(ptx, "k") {
            Err(ParamsError::Unreadable(why)) => why,
            other => panic!("{ptx:?}: {other:?}"),
        };
        // 8 * 2^61 overflows usize: a panic in debug builds, a wrap to 0 in release.
        assert_eq!(unreadable(".entry k(.param .b64 p[2305843009213693952])"), "a parameter's size overflows");
        assert_eq!(unreadable(".entry k(.param .b8 p[99999999999999999999999])"), "a parameter's array length");
        assert_eq!(unreadable(".entry k(.param .b8 p[2][3])"), "a parameter's array length");
        assert_eq!(unreadable(".entry k(.param .b8 p[x])"), "a parameter's array length");
        assert_eq!(unreadable(".entry k(.param .pred p)"), "a parameter of no known type");
        assert_eq!(unreadable(".entry k(.reg .u64 p)"), "a parameter not declared `.param`");
        assert_eq!(unreadable(".entry k(.param .u64 p"), "an unclosed parameter list");
        // The version table: a huge minor must not wrap into a small, wrong version.
        assert_eq!(needs_driver(".version 7.500000000"), None);
        assert_eq!(needs_driver(".version 9.4294967295"), None);
        assert_eq!(needs_driver(".version 8.5"), Some(12050));
        assert_eq!(needs_driver(".version 9.0"), Some(13000));
        assert_eq!(needs_driver(".version x.y"), None);
        assert_eq!(version(".version 12.1\n.target sm_90"), "12.1");
        assert_eq!(version(".target sm_90"), "?");
    }

    #[test]
    fn entries_are_listed_in_order() {
        let ptx = "// .entry commented_out(\n.visible .entry a(\n.param .u64 p)\n{ ret; }\n.entry b_2()\n{ ret; }\n.func not_an_entry()";
        assert_eq!(entries(ptx), ["a", "b_2"]);
    }
    #[test]
    fn launch_bounds_are_read_after_the_parameters() {
        let ptx = ".visible .entry k(\n\t.param .u64 k_param_0\n)\n.maxntid 384 // bounds\n{\n\tret;\n}\n\
                   .visible .entry j(\n)\n.maxntid 8, 4, 2\n{\n}\n.visible .entry free(\n)\n{\n}\n";
        assert_eq!(max_threads(ptx, "k"), Some(384));
        assert_eq!(max_threads(ptx, "j"), Some(64));
        assert_eq!(max_threads(ptx, "free"), None);
        assert_eq!(max_threads(ptx, "absent"), None);
    }
    #[test]
    fn register_budgets_fix_the_block_size() {
        let ptx = ".visible .entry ws(\n)\n.maxntid 384\n{\n\tsetmaxnreg.dec.sync.aligned.u32 40;\n}\n\
                   .visible .entry plain(\n)\n.maxntid 384\n{\n\tret;\n}\n.func f()\n{\n\tsetmaxnreg.inc.sync.aligned.u32 232;\n}\n";
        assert_eq!(exact_threads(ptx, "ws"), Some(384));
        assert_eq!(exact_threads(ptx, "plain"), None);
    }
}
