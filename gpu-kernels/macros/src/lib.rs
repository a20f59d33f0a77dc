//! `#[kernel]`: write a kernel once as a Rust function; get a PTX entry on the
//! device and a typed launch descriptor on the host.
//!
//! ```ignore
//! use sluice_device::slice::DeviceSliceMut;
//! use sluice_macros::kernel;
//!
//! #[kernel]
//! pub fn saxpy(mut y: DeviceSliceMut<f32>, x: &[f32], a: f32) {
//!     let i = sluice_device::thread::index_1d() as usize;
//!     if let (Some(yi), Some(xi)) = (y.for_thread_1d(), x.get(i)) {
//!         *yi = a * *xi + *yi;
//!     }
//! }
//! ```
//!
//! # What it expands to
//!
//! In both builds: the function as written, under a hidden name
//! (`__sluice_kernel_body_<name>`), compiled as an ordinary **safe** Rust function: an
//! unsafe operation in the body needs its own `unsafe` block, whatever the crate's edition
//! and lints, and the body's elided lifetimes are its own generic parameters, so it cannot
//! keep a parameter past the launch. A `#[kernel]` cannot be an `unsafe fn` (that is
//! `#[kernel(unchecked)]`), and its parameter types cannot name a lifetime.
//!
//! On `nvptx64` (the kernel build): a `#[no_mangle] extern "ptx-kernel"` entry
//! with the same name whose slice parameters are lowered to
//! (pointer, `u64` length) pairs, as sluice's kernel ABI says; it rebuilds them as `&[T]`
//! and `DeviceSliceMut<T>` and calls the body. Beside it, the global
//! `__sluice_abi_<name>`: each parameter's kind and the size and alignment of its element or
//! value type as the device build compiled them (`sluice_device::abi`), which the host
//! compares with its declaration when it loads the module; for a `#[kernel(dims = 1)]`, the
//! global `__sluice_launch_<name>` (`dims=1;`), by which the host refuses every launch that is
//! not 1-D, and for a `#[kernel(block = (x, y, z))]` the same global with `block=X,Y,Z;`
//! (every block must be that one). The device build also checks that every element and value
//! type is `bytemuck::Pod`.
//!
//! On the host: a zero-sized braced struct `__sluice_kernel_<name>` (named apart from the
//! kernel so that a module or item of the kernel's name beside it does not collide)
//! implementing `sluice_host::KernelDecl` (reached through `sluice_device`, so a kernel crate
//! needs no host-only dependency of its own), whose `Signature` lists the parameters as the
//! host sees them (`&[T]` → `Ref<T>`, `DeviceSliceMut<T>` → `Mut<T>`, any
//! other type by value), and the CPU backend's entry. `sluice::include_kernels!` pairs it
//! with the PTX this crate is compiled into and re-exports it under the kernel's name.
//! Launches through it are checked at compile time: argument count, types,
//! mutability, and the lane each view is bound to. The struct also gets
//! `args(..)`, the arguments by name (`st.launch(&kernels::saxpy, cfg,
//! kernels::saxpy::args(&mut y, &x, 2.0))`): a wrong argument is then reported
//! against the kernel's own parameter, pointing at the kernel's source line.
//!
//! # Parameters
//!
//! | in the kernel | on the host | device ABI |
//! | --- | --- | --- |
//! | `x: &[T]` | `Ref<T>`: a read-only view | `*const T`, `u64` |
//! | `y: DeviceSliceMut<T>` | `Mut<T>`: a mutable view | `*mut T`, `u64` |
//! | `bins: &[AtomicU32]` (any device-scope atomic `A`) | `Mut<u32>` (`Mut<A::Value>`): a mutable view | `*mut u32`, `u64` |
//! | `#[matrix(rows = m, cols = n)] c: MatrixMut<T, L>` (or `Option<MatrixMut<T, L>>`) | `Mut<T>`: a mutable view | `*mut T`, `u64` |
//! | `a: T` (`T: Pod`) | `T` by value | `T` |
//!
//! `&mut [T]` is refused: every thread of the grid would hold a mutable
//! reference to the whole slice at once, which Rust's aliasing rules forbid.
//! `DeviceSliceMut` hands each thread its own element safely
//! (`for_thread_1d`, `grid_stride`) and keeps arbitrary indexed writes
//! `unsafe`, with the duty (no two threads write one element) spelled out. A slice of
//! atomics (`&[AtomicU32]`, `&[AtomicF32]`, ...) is the safe way for any thread to update
//! any element: every access is atomic, and the host hands the launch the view mutably.
//!
//! A `MatrixMut<T, L>` parameter (`sluice_device::tile`) is a mutable view seen as a
//! row-major matrix split between the launch's threads by its type's tiling `L`. Its shape
//! comes from `#[matrix(rows = .., cols = .., ld = ..)]` on the parameter, each an integer
//! parameter of the kernel or an integer literal (`ld` defaults to `cols`): values every
//! thread sees alike, so every thread splits the matrix the same way. A view too short for
//! the shape fails the launch, or gives `None` for an `Option<MatrixMut<T, L>>`.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{parse_macro_input, FnArg, GenericArgument, ItemFn, Pat, PathArguments, Type};

/// Marks a function as a GPU kernel. See the crate docs.
///
/// `#[kernel]` checks what the host may launch safely; `#[kernel(unchecked)]` also accepts
/// raw pointers, references and any by-value type, and its host handle launches only through
/// the `unsafe` `Stream::launch_unchecked`.
///
/// A kernel is a `pub fn` (the host crate's `include_kernels!` names it from outside the
/// kernel crate) with one `#[kernel]`, all its options in it, in any order:
///
/// * `unchecked`: as above.
/// * `max_threads = N` (1 to 1024): CUDA's `__launch_bounds__(N)`; a launch with more
///   threads per block fails (`Error::KernelLimit`, naming the kernel).
/// * `dims = 1`: every launch is 1-D, grid `(n, 1, 1)` and blocks `(m, 1, 1)`. The host
///   refuses any other launch of the kernel (`Error::LaunchNot1d`, before anything runs; on
///   the CPU backend the kernel checks it too), so the GPU build assumes it: a grid-stride
///   loop (`DeviceSliceMut::grid_stride`) starts from `blockIdx.x * blockDim.x +
///   threadIdx.x` without first testing the launch's shape, as CUDA C++'s does. Worth it for
///   a kernel whose threads do little each (saxpy: 1.03x nvcc's time without it).
///
/// * `block = (x, y, z)` (or `(x, y)`, or `x`): every block is `(x, y, z)`, at most 1024
///   threads. The host refuses any other block (`Error::LaunchBlockShape`, before anything
///   runs; on the CPU backend the kernel checks it too), so the GPU build assumes it:
///   `block_dim_*()` are constants, `thread_idx_*()` are known below them, and a check of the
///   block's shape in the body (`BlockTile::partition`'s, a `dassert!`) folds away. PTX gets
///   `.reqntid x, y, z`, which bounds the block as `max_threads` would (so not both); with
///   `dims = 1`, `y` and `z` are 1. The sides are integer literals (a macro cannot read a
///   `const`); the host handle gives them back as `kernels::NAME::BLOCK`. A
///   `ThreadTiles<BM, BN, TX, TY>` output must then have `(TX, TY, 1)` = `(x, y, z)`, checked
///   at compile time (`partition()` would fail every launch).
///
/// ```ignore
/// #[kernel(dims = 1)]
/// pub fn saxpy(y: DeviceSliceMut<f32>, x: &[f32], a: f32) {
///     let mut y = y.prefix(x.len());
///     for (i, yi) in y.grid_stride() {
///         *yi = a.mul_add(x[i], *yi);
///     }
/// }
/// // st.launch(&kernels::saxpy, LaunchConfig::for_elements(n, 256), ..)  — runs
/// // LaunchConfig { grid: (64, 2, 1), .. }                              — Err(LaunchNot1d)
///
/// #[kernel(block = (32, 8))]
/// pub fn transpose(/* .. */) { /* every block is (32, 8, 1) */ }
/// // LaunchConfig { block: kernels::transpose::BLOCK, .. }              — runs ((32, 8, 1))
/// // LaunchConfig { block: (16, 16, 1), .. }                            — Err(LaunchBlockShape)
/// ```
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let attr = match parse_kernel_attr(TokenStream2::from(attr)) {
        Ok(parsed) => parsed,
        Err(e) => return e.to_compile_error().into(),
    };
    let func = parse_macro_input!(item as ItemFn);
    match expand(func.clone(), attr, quote!(::sluice_device)) {
        Ok(ts) => ts.into(),
        Err(e) => with_original(e, &func),
    }
}

const KERNEL_ATTR_HELP: &str = "#[kernel] takes `unchecked`, `max_threads = N`, `dims = 1` and `block = (x, y, z)`: \
                                `#[kernel]`, `#[kernel(unchecked)]`, `#[kernel(max_threads = 384)]`, \
                                `#[kernel(dims = 1)]`, `#[kernel(block = (32, 8))]`";

/// What `#[kernel(..)]` says.
#[derive(Clone, Copy)]
struct KernelAttr {
    mode: Mode,
    /// `max_threads = N`.
    max_threads: Option<u32>,
    /// `dims = 1`: every launch is 1-D (grid `(n, 1, 1)`, blocks `(m, 1, 1)`), which the host
    /// checks at each launch and the device build may then assume.
    one_d: bool,
    /// `block = (x, y, z)`: every block has this shape, which the host checks at each launch
    /// and the device build may then assume.
    block: Option<(u32, u32, u32)>,
}

/// `#[kernel(..)]`'s arguments: `unchecked`, `max_threads = N` (1 to 1024), `dims = 1`,
/// `block = (x, y, z)`, in any order.
fn parse_kernel_attr(attr: TokenStream2) -> syn::Result<KernelAttr> {
    use syn::parse::Parser;
    let metas = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated.parse2(attr)?;
    let (mut mode, mut bounds, mut one_d) = (Mode::Checked, None, false);
    let mut block: Option<((u32, u32, u32), &syn::Expr)> = None;
    for meta in &metas {
        match meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("block") && block.is_none() => {
                block = Some((parse_block(&nv.value)?, &nv.value))
            }
            syn::Meta::Path(p) if p.is_ident("unchecked") && mode == Mode::Checked => mode = Mode::Unchecked,
            syn::Meta::NameValue(nv) if nv.path.is_ident("dims") && !one_d => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.base10_parse::<u32>().ok() == Some(1) =>
                {
                    one_d = true
                }
                _ => {
                    return Err(syn::Error::new_spanned(
                        &nv.value,
                        "`dims` takes the integer literal `1`: `#[kernel(dims = 1)]` declares that every launch is 1-D (grid \
                             `(n, 1, 1)`, blocks `(m, 1, 1)`), which the host checks at each launch and the \
                             compiler may then assume; a kernel launched in 2-D or 3-D takes no `dims`",
                    ))
                }
            },
            syn::Meta::NameValue(nv) if nv.path.is_ident("max_threads") && bounds.is_none() => {
                let n = match &nv.value {
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse::<u32>().ok(),
                    _ => None,
                };
                match n {
                    Some(n @ 1..=1024) => bounds = Some(n),
                    _ => {
                        return Err(syn::Error::new_spanned(
                            &nv.value,
                            "`max_threads` is an integer literal from 1 to 1024: the most threads a block of this \
                             kernel has (CUDA's `__launch_bounds__`); ptxas may then give each thread up to \
                             65536 / max_threads registers, and a launch with more threads per block fails",
                        ))
                    }
                }
            }
            other => {
                let given = KernelAttr { mode, max_threads: bounds, one_d, block: block.map(|b| b.0) };
                return Err(syn::Error::new_spanned(other, unknown_kernel_option(other, given)));
            }
        }
    }
    let attr = KernelAttr { mode, max_threads: bounds, one_d, block: block.map(|b| b.0) };
    if let (Some(why), Some((_, expr))) = (combination_error(attr), block) {
        return Err(syn::Error::new_spanned(expr, why));
    }
    Ok(attr)
}

/// Why options that each parse cannot go together, if they cannot: `block` with
/// `max_threads` (the block already bounds itself: PTX's `.reqntid` and `.maxntid` exclude
/// each other), or a 2-D or 3-D `block` with `dims = 1`.
fn combination_error(attr: KernelAttr) -> Option<String> {
    let (x, y, z) = attr.block?;
    if let Some(n) = attr.max_threads {
        let threads = x * y * z;
        return Some(if n < threads {
            format!(
                "`block = ({x}, {y}, {z})` has {threads} threads, more than `max_threads = {n}`; and a block \
                 bounds itself: keep one of the two (PTX takes one), a smaller `block` or no `block`"
            )
        } else {
            format!(
                "`block = ({x}, {y}, {z})` fixes every block at {threads} threads, which bounds it as \
                 `max_threads = {threads}` would: drop `max_threads` (PTX takes one of the two)"
            )
        });
    }
    if attr.one_d && (y, z) != (1, 1) {
        return Some(format!(
            "`block = ({x}, {y}, {z})` is not 1-D, but `dims = 1` says every block is `(m, 1, 1)`: write a 1-D \
             block (`block = m`) with `dims = 1`, or drop `dims = 1` to launch 2-D or 3-D blocks"
        ));
    }
    None
}

/// `block = ..`'s value: `x`, `(x,)`, `(x, y)` or `(x, y, z)`, integer literals, each at least
/// 1, `z ≤ 64` and `x * y * z ≤ 1024` (CUDA's limits).
fn parse_block(value: &syn::Expr) -> syn::Result<(u32, u32, u32)> {
    const HELP: &str = "`block` is the shape every block of the kernel has, as 1 to 3 integer literals: \
                        `block = 256`, `block = (32, 8)`, `block = (8, 8, 4)`; each side at least 1, z at most \
                        64, at most 1024 threads in all";
    // An unsuffixed, `u32` or `usize` integer literal (a `const` cannot be read by a macro).
    let lit = |e: &syn::Expr| match e {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if matches!(i.suffix(), "" | "u32" | "usize") => {
            i.base10_parse::<u64>().ok()
        }
        _ => None,
    };
    let sides: Vec<Option<u64>> = match value {
        syn::Expr::Tuple(t) => t.elems.iter().map(lit).collect(),
        syn::Expr::Paren(p) => vec![lit(&p.expr)],
        other => vec![lit(other)],
    };
    let err = |why: String| syn::Error::new_spanned(value, format!("{why}: {HELP}"));
    if sides.is_empty() || sides.len() > 3 || sides.iter().any(|s| s.is_none()) {
        let what = if matches!(value, syn::Expr::Path(_))
            || matches!(value, syn::Expr::Tuple(t) if t.elems.iter().any(|e| matches!(e, syn::Expr::Path(_))))
        {
            "not a block shape (a `const` cannot be used here: `#[kernel]` reads the literals themselves; the host \
             handle gives them back as `kernels::NAME::BLOCK`)"
        } else {
            "not a block shape"
        };
        return Err(err(what.into()));
    }
    let mut d = [1u64; 3];
    for (i, s) in sides.iter().enumerate() {
        d[i] = s.unwrap_or(1);
    }
    let [x, y, z] = d;
    if x == 0 || y == 0 || z == 0 {
        return Err(err(format!("`({x}, {y}, {z})` has a side of 0, so no threads")));
    }
    let threads = x.saturating_mul(y).saturating_mul(z);
    if threads > 1024 {
        return Err(err(format!("`({x}, {y}, {z})` is {threads} threads, more than the 1024 a block can have")));
    }
    if z > 64 {
        return Err(err(format!("`({x}, {y}, {z})` has z = {z}, more than the 64 a block can have")));
    }
    // Each side at most 1024 here, so a u32.
    Ok((x as u32, y as u32, z as u32))
}

/// What to write instead of two `#[kernel]`s: the one `#[kernel(..)]` that says what `attr`
/// and the second attribute `again` say together (as written: `unchecked` only where one of
/// them has it), or, where they say different things (an option given in both with other
/// values, options that cannot go together), that.
fn merged_kernel_attr(attr: KernelAttr, again: &syn::Attribute) -> String {
    let other = match &again.meta {
        syn::Meta::List(list) => parse_kernel_attr(list.tokens.clone()),
        _ => parse_kernel_attr(TokenStream2::new()),
    };
    let other = match other {
        Ok(o) => o,
        Err(e) => return format!("give it once, with every option in it (the second one is not valid: {e})"),
    };
    let conflict = |what: &str, a: String, b: String| {
        format!("give it once, with every option in it; they give `{what}` different values ({a} and {b}): choose one")
    };
    if let (Some(a), Some(b)) = (attr.max_threads, other.max_threads) {
        if a != b {
            return conflict("max_threads", a.to_string(), b.to_string());
        }
    }
    if let (Some(a), Some(b)) = (attr.block, other.block) {
        if a != b {
            return conflict("block", format!("{a:?}"), format!("{b:?}"));
        }
    }
    let merged = KernelAttr {
        mode: if attr.mode == Mode::Unchecked || other.mode == Mode::Unchecked {
            Mode::Unchecked
        } else {
            Mode::Checked
        },
        max_threads: attr.max_threads.or(other.max_threads),
        one_d: attr.one_d || other.one_d,
        block: attr.block.or(other.block),
    };
    if let Some(why) = combination_error(merged) {
        return format!("give it once, with options that go together: {why}");
    }
    let mut opts = Vec::new();
    if merged.mode == Mode::Unchecked {
        opts.push("unchecked".to_string());
    }
    if let Some(n) = merged.max_threads {
        opts.push(format!("max_threads = {n}"));
    }
    if merged.one_d {
        opts.push("dims = 1".to_string());
    }
    if let Some((x, y, z)) = merged.block {
        opts.push(format!("block = ({x}, {y}, {z})"));
    }
    let one = if opts.is_empty() { "#[kernel]".to_string() } else { format!("#[kernel({})]", opts.join(", ")) };
    format!("give it once, with every option in it: `{one}`")
}

/// The message for an option `#[kernel(..)]` did not take: given twice, misspelt, or unknown.
fn unknown_kernel_option(meta: &syn::Meta, given: KernelAttr) -> String {
    let name = meta.path().get_ident().map(|i| i.to_string()).unwrap_or_default();
    let twice = match name.as_str() {
        "unchecked" => given.mode == Mode::Unchecked,
        "max_threads" => given.max_threads.is_some(),
        "dims" => given.one_d,
        "block" => given.block.is_some(),
        _ => false,
    };
    if twice {
        return format!("`{name}` is given twice: write each option of #[kernel] once");
    }
    let hint = match name.as_str() {
        "dim" | "dimensions" | "dimension" | "one_d" | "grid_1d" | "launch_1d" => " (did you mean `dims = 1`?)",
        "max_thread" | "launch_bounds" | "max_threads_per_block" => " (did you mean `max_threads = N`?)",
        "block_size" | "block_dim" | "block_dims" | "blocks" | "threads" | "reqntid" => {
            " (did you mean `block = (x, y, z)`, or `max_threads = N`?)"
        }
        "dims" | "max_threads" | "unchecked" | "block" => " (written in another form than these)",
        _ => "",
    };
    format!("unknown option{hint}: {KERNEL_ATTR_HELP}")
}

/// The error, and the function as written (unused, so that its names still resolve and the
/// error is the only one reported).
fn with_original(e: syn::Error, func: &ItemFn) -> TokenStream {
    let e = e.to_compile_error();
    // Without the parameters' `#[matrix]`, which only `#[kernel]` reads.
    let mut func = func.clone();
    strip_matrix_attrs(&mut func.sig);
    quote!(#e #[allow(dead_code, unused)] #func).into()
}

/// Removes `#[matrix(..)]` from the parameters (rustc knows no such attribute).
fn strip_matrix_attrs(sig: &mut syn::Signature) {
    for input in &mut sig.inputs {
        if let FnArg::Typed(pt) = input {
            pt.attrs.retain(|a| !a.path().is_ident("matrix"));
        }
    }
}

/// `cuda_std`'s `#[kernel]`, as the compatibility crate `sluice-cuda-std` (library name
/// `cuda_std`) re-exports it: an unchecked kernel (Rust-CUDA kernels take raw pointers)
/// whose expansion reaches sluice's device std through `::cuda_std::__sluice`, so a ported
/// kernel crate depends on `cuda_std` alone.
#[proc_macro_attribute]
pub fn cuda_std_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        let attr = TokenStream2::from(attr);
        return syn::Error::new(attr.span(), "cuda_std's #[kernel] takes no arguments").to_compile_error().into();
    }
    let mut func = parse_macro_input!(item as ItemFn);
    if func.sig.unsafety.is_none() {
        let msg = "a cuda_std kernel must be an `unsafe fn` (as Rust-CUDA requires): its caller vouches for the \
                   raw pointers it takes";
        return syn::Error::new(func.sig.fn_token.span(), msg).to_compile_error().into();
    }
    let prologue = rewrite_shared_statics(&mut func.block);
    func.block.stmts.splice(0..0, prologue);
    let attr = KernelAttr { mode: Mode::Unchecked, max_threads: None, one_d: false, block: None };
    match expand(func.clone(), attr, quote!(::cuda_std::__sluice)) {
        Ok(ts) => ts.into(),
        Err(e) => with_original(e, &func),
    }
}

/// `cuda_std`'s `#[address_space(...)]` on a `static`: `shared` puts it in the block's shared
/// memory (`shared_static!`, a zero-sized handle indexed as the array); `global` and
/// `constant` leave it as is (a Rust `static` is in global memory); `local` is refused.
#[proc_macro_attribute]
pub fn address_space(attr: TokenStream, item: TokenStream) -> TokenStream {
    let space = TokenStream2::from(attr).to_string();
    let item2 = TokenStream2::from(item.clone());
    match space.as_str() {
        "shared" => {
            let st = parse_macro_input!(item as syn::ItemStatic);
            shared_static(&st, false).into()
        }
        "global" | "constant" => item,
        "local" => syn::Error::new(
            item2.span(),
            "`address_space(local)`: a per-thread static has no Rust meaning; use a local variable",
        )
        .to_compile_error()
        .into(),
        other => syn::Error::new(item2.span(), format!("unknown address space `{other}` (shared, global, constant)"))
            .to_compile_error()
            .into(),
    }
}

/// `static mut NAME: T = INIT;` as `cuda_std::__sluice::shared_static!` (in a kernel body
/// with `@kernel`, declared by the kernel's prologue).
fn shared_static(st: &syn::ItemStatic, in_kernel: bool) -> TokenStream2 {
    let attrs: Vec<_> = st.attrs.iter().filter(|a| !a.path().is_ident("address_space")).collect();
    let (vis, name, ty, init) = (&st.vis, &st.ident, &st.ty, &st.expr);
    let at = if in_kernel { quote!(@kernel) } else { quote!() };
    quote! {
        ::cuda_std::__sluice::shared_static! { #at #(#attrs)* #vis static mut #name: #ty = #init; }
    }
}

fn is_shared_static(st: &syn::ItemStatic) -> bool {
    st.attrs
        .iter()
        .any(|a| a.path().is_ident("address_space") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "shared"))
}

/// Rewrites the `#[address_space(shared)] static mut`s directly in a kernel body to their
/// in-kernel form, and returns the prologue that declares them (one `mov` per access then).
fn rewrite_shared_statics(block: &mut syn::Block) -> Vec<syn::Stmt> {
    let mut prologue = Vec::new();
    for stmt in &mut block.stmts {
        if let syn::Stmt::Item(syn::Item::Static(st)) = stmt {
            if is_shared_static(st) {
                let name = &st.ident;
                prologue.push(syn::parse_quote! {
                    // SAFETY: the shared static is declared in this kernel's body (just below),
                    // and its declaration is what this call emits, once, at the kernel's start.
                    unsafe { ::cuda_std::__sluice::shared::__declare_in_kernel(&raw const #name) };
                });
                *stmt = syn::Stmt::Item(syn::Item::Verbatim(shared_static(st, true)));
            }
        }
    }
    prologue
}

/// Which launches a kernel's host handle allows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `#[kernel]`: slices and `Pod` values only, launched safely.
    Checked,
    /// `#[kernel(unchecked)]` (and `cuda_std`'s): also raw pointers, `&T`, `&mut [T]` and
    /// any by-value type; launched only through `unsafe`.
    Unchecked,
}

enum Kind {
    /// `&[T]`
    Ref(Type),
    /// `&[A]` with `A` a device-scope atomic type (`AtomicU32` ...): written by every thread,
    /// atomically; the host passes a mutable view of `A`'s plain type
    Atomic(Type),
    /// `DeviceSliceMut<T>`, or (unchecked) `&mut [T]` rebuilt as such a slice
    Mut(Type, bool),
    /// `MatrixMut<T, L>` (`Option<..>` if `optional`): a mutable slice of `T` made into a
    /// matrix of the shape `#[matrix(..)]` gives
    Matrix { elem: Type, optional: bool, shape: Box<MatrixShape> },
    /// `TmaMatrix<E, R, C>`: a row-major matrix read through TMA in boxes of `R x C`,
    /// passed as its tensor map (128 bytes, read in place in parameter memory)
    Tma(Box<TmaParam>),
    /// by value, `Pod`
    Value(Type),
    /// (unchecked) `*mut T`
    PtrMut(Type),
    /// (unchecked) `*const T`, or `&T` (`true`)
    Ptr(Type, bool),
    /// (unchecked) by value, any `Copy` type
    ByValue(Type),
}

struct Param {
    ident: syn::Ident,
    kind: Kind,
}

/// A `TmaMatrix<E, R, C>` parameter: its type as written, element type and box shape.
struct TmaParam {
    ty: Type,
    elem: Type,
    rows: TokenStream2,
    cols: TokenStream2,
}

/// A `MatrixMut` parameter's `#[matrix(rows = .., cols = .., ld = ..)]`: each an integer
/// parameter of the kernel (checked once all are known) or an integer literal.
struct MatrixShape {
    rows: syn::Expr,
    cols: syn::Expr,
    ld: Option<syn::Expr>,
    span: Span,
}

const MATRIX_HELP: &str = "write `#[matrix(rows = .., cols = ..)]` (and `ld = ..` if rows are further apart than \
                           `cols`), each an integer parameter of the kernel or an integer literal";

/// The element type of `MatrixMut<T, L>`, and whether it is wrapped in `Option<..>`; `None`
/// for any other type.
fn matrix_elem(ty: &Type) -> Option<(Type, bool)> {
    fn last_args(ty: &Type, name: &str) -> Option<Vec<GenericArgument>> {
        let Type::Path(p) = ty else { return None };
        if p.qself.is_some() {
            return None;
        }
        let last = p.path.segments.last()?;
        if last.ident != name {
            return None;
        }
        match &last.arguments {
            PathArguments::AngleBracketed(a) => Some(a.args.iter().cloned().collect()),
            _ => Some(Vec::new()),
        }
    }
    let first_type = |args: Vec<GenericArgument>| {
        args.into_iter().find_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
    };
    if let Some(args) = last_args(ty, "Option") {
        let inner = first_type(args)?;
        let (elem, _) = matrix_elem(&inner)?;
        return Some((elem, true));
    }
    let args = last_args(ty, "MatrixMut")?;
    // Without its element type it is still a matrix: report the missing arguments there.
    Some((first_type(args).unwrap_or_else(|| syn::parse_quote!(_)), false))
}

/// The tiling type `L` of a `MatrixMut<T, L>` (or `Option<MatrixMut<T, L>>`) parameter, if
/// written.
fn matrix_tiling(ty: &Type) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let PathArguments::AngleBracketed(a) = &last.arguments else { return None };
    let mut types = a.args.iter().filter_map(|g| match g {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    if last.ident == "Option" {
        return matrix_tiling(types.next()?);
    }
    if last.ident != "MatrixMut" {
        return None;
    }
    types.nth(1).filter(|t| !matches!(t, Type::Infer(_))).cloned()
}

/// Parses `#[matrix(rows = .., cols = .., ld = ..)]`.
fn parse_matrix_attr(attr: &syn::Attribute, kernel: &str, name: &str) -> syn::Result<MatrixShape> {
    let (mut rows, mut cols, mut ld) = (None, None, None);
    attr.parse_nested_meta(|meta| {
        let slot = if meta.path.is_ident("rows") {
            &mut rows
        } else if meta.path.is_ident("cols") {
            &mut cols
        } else if meta.path.is_ident("ld") {
            &mut ld
        } else {
            return Err(meta.error(format!(
                "kernel `{kernel}`, parameter `{name}`: `#[matrix]` takes `rows`, `cols` and `ld`; {MATRIX_HELP}"
            )));
        };
        if slot.is_some() {
            return Err(meta.error("given twice"));
        }
        *slot = Some(meta.value()?.parse::<syn::Expr>()?);
        Ok(())
    })?;
    let missing = |what: &str| {
        syn::Error::new_spanned(
            attr,
            format!("kernel `{kernel}`, parameter `{name}`: `#[matrix]` needs `{what}`; {MATRIX_HELP}"),
        )
    };
    Ok(MatrixShape {
        rows: rows.ok_or_else(|| missing("rows"))?,
        cols: cols.ok_or_else(|| missing("cols"))?,
        ld,
        span: attr.span(),
    })
}

/// Checks that a `#[matrix]` dimension is an integer literal or a by-value parameter of the
/// kernel: a value that is the same in every thread of the launch.
fn check_matrix_dim(e: &syn::Expr, params: &[Param], kernel: &str, name: &str) -> syn::Result<()> {
    let ok = match e {
        syn::Expr::Lit(l) => matches!(l.lit, syn::Lit::Int(_)),
        syn::Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => p.path.get_ident().is_some_and(|id| {
            params.iter().any(|q| &q.ident == id && matches!(q.kind, Kind::Value(_) | Kind::ByValue(_)))
        }),
        _ => false,
    };
    if ok {
        return Ok(());
    }
    Err(syn::Error::new_spanned(
        e,
        format!(
            "kernel `{kernel}`, parameter `{name}`: a `#[matrix]` dimension must be an integer parameter of the \
             kernel (by value) or an integer literal — a value every thread of the launch sees alike. A shape \
             computed in the kernel could differ between threads, and threads that split the matrix differently \
             could write the same elements. Pass the dimension as a parameter"
        ),
    ))
}

/// A primitive number type: passed as itself (`Pod`) even by unchecked kernels, so their
/// handles read `(PtrMut<f32>, u32)`, not `(PtrMut<f32>, ByValue<u32>)`.
fn is_primitive(ty: &Type) -> bool {
    const PRIMITIVES: &[&str] =
        &["u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32", "f64"];
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1
        && PRIMITIVES.iter().any(|n| p.path.segments[0].ident == n))
}

/// An atomic type of the device std by its name (`AtomicU32`, `atomic::AtomicF32`, ...): a
/// `&[A]` of one is a parameter every thread writes (atomically), not a read-only slice.
fn is_atomic(ty: &Type) -> bool {
    const ATOMICS: &[&str] = &["AtomicU32", "AtomicI32", "AtomicU64", "AtomicI64", "AtomicF32", "AtomicF64"];
    matches!(ty, Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| ATOMICS.iter().any(|n| s.ident == n)))
}

/// `TmaMatrix<E, R, C>` (any path ending so): its element type and box shape.
fn tma_matrix(ty: &Type) -> Option<(Type, TokenStream2, TokenStream2)> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "TmaMatrix" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    let args: Vec<&GenericArgument> = args.args.iter().collect();
    let [GenericArgument::Type(elem), r, c] = args.as_slice() else { return None };
    let dim = |a: &GenericArgument| match a {
        GenericArgument::Type(t) => Some(t.to_token_stream()),
        GenericArgument::Const(e) => Some(e.to_token_stream()),
        _ => None,
    };
    Some((elem.clone(), dim(r)?, dim(c)?))
}

fn classify(ty: &Type, kernel: &str, name: &str, mode: Mode) -> syn::Result<Kind> {
    let unchecked = mode == Mode::Unchecked;
    match ty {
        Type::Path(_) if tma_matrix(ty).is_some() => {
            let (elem, rows, cols) = tma_matrix(ty).expect("checked above");
            Ok(Kind::Tma(Box::new(TmaParam { ty: ty.clone(), elem, rows, cols })))
        }
        Type::Reference(r) if tma_matrix(&r.elem).is_some() => Err(syn::Error::new_spanned(
            ty,
            format!(
                "kernel `{kernel}`, parameter `{name}`: take a TMA matrix by value, `{}`: it names the tensor map \
                 the launch leaves in the kernel's parameter memory",
                r.elem.to_token_stream().to_string().replace(' ', "")
            ),
        )),
        Type::Reference(r) => {
            if let Type::Slice(sl) = &*r.elem {
                if r.mutability.is_some() {
                    if unchecked {
                        return Ok(Kind::Mut((*sl.elem).clone(), true));
                    }
                    return Err(syn::Error::new_spanned(
                        ty,
                        format!(
                            "kernel `{kernel}`, parameter `{name}`: a kernel cannot take `&mut [T]`: every thread \
                             would hold a mutable reference to the whole slice at once. Take \
                             `DeviceSliceMut<T>` and use `.for_thread_1d()` / `.grid_stride()` (one element per \
                             thread), or its `unsafe` indexed writes; or declare the kernel `#[kernel(unchecked)]` \
                             (launched only through `unsafe`)"
                        ),
                    ));
                }
                if is_atomic(&sl.elem) {
                    return Ok(Kind::Atomic((*sl.elem).clone()));
                }
                return Ok(Kind::Ref((*sl.elem).clone()));
            }
            if unchecked && r.mutability.is_none() {
                return Ok(Kind::Ptr((*r.elem).clone(), true));
            }
            Err(syn::Error::new_spanned(
                ty,
                format!(
                    "kernel `{kernel}`, parameter `{name}`: references other than `&[T]` cannot cross to the \
                     device in a checked kernel; pass a slice (`&[T]`, `DeviceSliceMut<T>`) or a `Pod` value, or \
                     declare the kernel `#[kernel(unchecked)]` (`&T` is then allowed, launched through `unsafe`)"
                ),
            ))
        }
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last().expect("a path has a segment");
            if last.ident == "DeviceSliceMut" {
                let PathArguments::AngleBracketed(args) = &last.arguments else {
                    return Err(syn::Error::new(ty.span(), "write the element type: `DeviceSliceMut<T>`"));
                };
                let elem = args.args.iter().find_map(|a| match a {
                    GenericArgument::Type(t) => Some(t.clone()),
                    _ => None,
                });
                return elem
                    .map(|t| Kind::Mut(t, false))
                    .ok_or_else(|| syn::Error::new(ty.span(), "write the element type: `DeviceSliceMut<T>`"));
            }
            Ok(if unchecked && !is_primitive(ty) { Kind::ByValue(ty.clone()) } else { Kind::Value(ty.clone()) })
        }
        Type::Ptr(ptr) if unchecked => Ok(if ptr.mutability.is_some() {
            Kind::PtrMut((*ptr.elem).clone())
        } else {
            Kind::Ptr((*ptr.elem).clone(), false)
        }),
        Type::Ptr(_) => Err(syn::Error::new_spanned(
            ty,
            format!(
                "kernel `{kernel}`, parameter `{name}`: raw pointers carry no length and no access rule, so a \
                 checked kernel cannot take them. Take `&[T]` or `DeviceSliceMut<T>` (lowered to pointer + \
                 length), or declare the kernel `#[kernel(unchecked)]`: its host handle then launches only \
                 through `unsafe {{ st.launch_unchecked(..) }}`"
            ),
        )),
        _ => Ok(if unchecked { Kind::ByValue(ty.clone()) } else { Kind::Value(ty.clone()) }),
    }
}

/// Refuses explicit lifetimes (other than `'_`) in a parameter type: a kernel's parameters
/// live for one launch, and a lifetime the signature names (`'static` above all) would let
/// the body keep them past it.
fn refuse_named_lifetimes(ty: &Type, kernel: &str, name: &str) -> syn::Result<()> {
    struct Finder(Option<syn::Lifetime>);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_lifetime(&mut self, l: &'ast syn::Lifetime) {
            if l.ident != "_" && self.0.is_none() {
                self.0 = Some(l.clone());
            }
        }
    }
    let mut f = Finder(None);
    syn::visit::Visit::visit_type(&mut f, ty);
    match f.0 {
        None => Ok(()),
        Some(l) => Err(syn::Error::new_spanned(
            &l,
            format!(
                "kernel `{kernel}`, parameter `{name}`: a kernel parameter cannot name a lifetime (`{l}`): its \
                 memory is lent for one launch only, and a named lifetime (`'static` above all) would let the \
                 body keep it past the launch. Leave the lifetime out (`&[f32]`, `DeviceSliceMut<f32>`) or \
                 write `'_`"
            ),
        )),
    }
}

/// The attributes of a kernel function, by where the expansion puts them.
struct Attrs<'a> {
    /// `#[doc]`: on the device entry and the host declaration.
    docs: Vec<&'a syn::Attribute>,
    /// `#[cfg]`: on every item the kernel expands to.
    cfgs: Vec<&'a syn::Attribute>,
    /// The rest (`#[allow]`, `#[deny]`, `#[cfg_attr]`, ...): on the body, the user's function.
    body: Vec<&'a syn::Attribute>,
}

fn split_attrs(attrs: &[syn::Attribute]) -> Attrs<'_> {
    let mut out = Attrs { docs: Vec::new(), cfgs: Vec::new(), body: Vec::new() };
    for a in attrs {
        if a.path().is_ident("doc") {
            out.docs.push(a);
        } else if a.path().is_ident("cfg") {
            out.cfgs.push(a);
        } else if !a.path().is_ident("inline") {
            out.body.push(a);
        }
    }
    out
}

fn expand(func: ItemFn, attr: KernelAttr, dev: TokenStream2) -> syn::Result<TokenStream2> {
    let KernelAttr { mode, max_threads, one_d, block } = attr;
    let sig = &func.sig;
    let name = &sig.ident;
    let kernel = name.to_string();
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new(
            sig.generics.span(),
            format!("kernel `{kernel}` cannot be generic: a PTX entry has one concrete signature"),
        ));
    }
    if let Some(again) = func.attrs.iter().find(|a| a.path().segments.last().is_some_and(|s| s.ident == "kernel")) {
        return Err(syn::Error::new_spanned(
            again,
            format!("kernel `{kernel}`: `#[kernel]` is given twice; {}", merged_kernel_attr(attr, again)),
        ));
    }
    if !matches!(func.vis, syn::Visibility::Public(_)) {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            format!(
                "kernel `{kernel}` must be `pub`: the host crate's `include_kernels!` names it from outside this \
                 crate (write `pub fn {kernel}`)"
            ),
        ));
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        return Err(syn::Error::new(
            ty.span(),
            format!("kernel `{kernel}` must return `()`: write results through a `DeviceSliceMut`"),
        ));
    }
    if sig.asyncness.is_some() || sig.variadic.is_some() || sig.constness.is_some() || sig.abi.is_some() {
        return Err(syn::Error::new(sig.span(), format!("kernel `{kernel}` must be a plain `fn`")));
    }
    if let (Mode::Checked, Some(unsafety)) = (mode, &sig.unsafety) {
        return Err(syn::Error::new(
            unsafety.span(),
            format!(
                "kernel `{kernel}`: a `#[kernel]` is a safe function: its launches are safe, so its body cannot \
                 have preconditions. Remove `unsafe` and put each unsafe operation in an `unsafe {{ }}` block with \
                 a `// SAFETY:` comment, or declare the kernel `#[kernel(unchecked)]` (launched only through \
                 `unsafe {{ st.launch_unchecked(..) }}`)"
            ),
        ));
    }
    if mode == Mode::Checked {
        if let Some(at) = find_ident(func.block.to_token_stream(), "global_asm") {
            return Err(syn::Error::new(
                at.span(),
                format!(
                    "kernel `{kernel}`: `global_asm!` in a kernel's body: module assembly can define any symbol \
                     (a kernel entry, an allocator's `malloc` on the host) and Rust asks no `unsafe` for it, so a \
                     safe kernel refuses it; write it outside the kernel, where it is the crate's own code"
                ),
            ));
        }
    }
    let mut params = Vec::new();
    // The `MatrixMut` parameters' tiling types, for `block = ..`'s compile-time check.
    let mut tilings: Vec<Type> = Vec::new();
    for input in &sig.inputs {
        let FnArg::Typed(pt) = input else {
            return Err(syn::Error::new(input.span(), format!("kernel `{kernel}` cannot take `self`")));
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return Err(syn::Error::new(
                pt.pat.span(),
                format!("kernel `{kernel}`: parameters must be plain names (no patterns)"),
            ));
        };
        if pi.by_ref.is_some() || pi.subpat.is_some() {
            return Err(syn::Error::new(
                pt.pat.span(),
                format!("kernel `{kernel}`: parameters must be plain names (no `ref`, no `@` patterns)"),
            ));
        }
        let pname = pi.ident.to_string();
        refuse_named_lifetimes(&pt.ty, &kernel, &pname)?;
        if let Type::ImplTrait(_) = &*pt.ty {
            return Err(syn::Error::new_spanned(
                &pt.ty,
                format!("kernel `{kernel}`, parameter `{pname}`: `impl Trait` has no ABI; name a concrete type"),
            ));
        }
        let matrix_attrs: Vec<&syn::Attribute> = pt.attrs.iter().filter(|a| a.path().is_ident("matrix")).collect();
        let kind = match (matrix_elem(&pt.ty), matrix_attrs.as_slice()) {
            (Some((elem, optional)), [attr]) => {
                Kind::Matrix { elem, optional, shape: Box::new(parse_matrix_attr(attr, &kernel, &pname)?) }
            }
            (Some(_), []) => {
                return Err(syn::Error::new_spanned(
                    &pt.ty,
                    format!(
                    "kernel `{kernel}`, parameter `{pname}`: a `MatrixMut` parameter needs its shape: {MATRIX_HELP}, \
                         e.g. `#[matrix(rows = m, cols = n)] {pname}: MatrixMut<f32, ThreadTiles<32, 32, 32, 8>>`"
                ),
                ))
            }
            (_, [_, second, ..]) => {
                return Err(syn::Error::new_spanned(
                    second,
                    format!("kernel `{kernel}`, parameter `{pname}`: one `#[matrix]`"),
                ))
            }
            (None, [attr]) => {
                return Err(syn::Error::new_spanned(
                    attr,
                    format!(
                        "kernel `{kernel}`, parameter `{pname}`: `#[matrix]` goes on a `MatrixMut<T, L>` (or \
                         `Option<MatrixMut<T, L>>`) parameter"
                    ),
                ))
            }
            (None, []) => classify(&pt.ty, &kernel, &pname, mode)?,
        };
        if let (Kind::Matrix { .. }, Some(l)) = (&kind, matrix_tiling(&pt.ty)) {
            tilings.push(l);
        }
        params.push(Param { ident: pi.ident.clone(), kind });
    }
    for p in &params {
        if let Kind::Matrix { shape, .. } = &p.kind {
            let name = p.ident.to_string();
            for e in [Some(&shape.rows), Some(&shape.cols), shape.ld.as_ref()].into_iter().flatten() {
                check_matrix_dim(e, &params, &kernel, &name)?;
            }
        }
    }

    let vis = &func.vis;
    let Attrs { docs, cfgs, body: body_attrs } = split_attrs(&func.attrs);

    // The user's function itself, as written (signature, patterns and all), under a fixed
    // name: the body is compiled as the body of an ordinary Rust `fn`, safe for a checked
    // kernel whatever the edition and lints, and its elided lifetimes are generic
    // parameters of its own, so nothing in it can keep a parameter past the call.
    let inner_name = format_ident!("__sluice_kernel_body_{}", name);
    let mut inner_sig = func.sig.clone();
    inner_sig.ident = inner_name.clone();
    strip_matrix_attrs(&mut inner_sig);
    // The parameters a `#[matrix]` names are used there: so that one used nowhere else in the
    // body draws no "unused variable" warning.
    let mut inner_block = func.block.clone();
    let shape_uses: Vec<syn::Stmt> = params
        .iter()
        .filter_map(|p| match &p.kind {
            Kind::Matrix { shape, .. } => Some(shape),
            _ => None,
        })
        .flat_map(|shape| [Some(&shape.rows), Some(&shape.cols), shape.ld.as_ref()].into_iter().flatten())
        .filter(|e| matches!(e, syn::Expr::Path(_)))
        .map(|e| syn::parse_quote!(let _ = &#e;))
        .collect();
    inner_block.stmts.splice(0..0, shape_uses);
    let inner_block = &inner_block;
    // A checked body cannot export a symbol without `unsafe`: `#[no_mangle]`, `#[export_name]`
    // and `#[link_section]` on an item in it (even behind a `cfg_attr` one build sees) must be
    // written `#[unsafe(..)]`, in every edition, in both builds (the builder denies the lint in
    // the device build; the host build is the user's cargo's). `forbid`: an `allow` inside
    // the body cannot lift it.
    let forbid = (mode == Mode::Checked).then(|| quote!(#[forbid(unsafe_attr_outside_unsafe)]));
    let inner = quote! {
        #(#cfgs)*
        #(#body_attrs)*
        #forbid
        // `DeviceFloat`'s methods (`erf`, ...) on `f32` may one day collide with std's
        // inherent ones on the host; the device build has no such methods.
        #[cfg_attr(not(target_arch = "nvptx64"), allow(unstable_name_collisions))]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        #[inline(always)]
        #inner_sig #inner_block
    };

    // Device: the entry with lowered parameters, each rebuilt under its own name.
    let mut abi = Vec::new();
    let mut rebind = Vec::new();
    // Compile-time checks the device build makes of the types it compiled.
    let mut device_checks = Vec::new();
    // The lowered parameters one by one (name, type), for the CPU entry.
    let mut lowered: Vec<(syn::Ident, TokenStream2)> = Vec::new();
    // The parameter record left in the PTX: (name, kind letter, the type measured).
    let mut record: Vec<(String, u8, Type)> = Vec::new();
    // The lowered parameters read in place (`__grid_constant__`), by index.
    let mut grid_constants: Vec<usize> = Vec::new();
    for p in &params {
        let id = &p.ident;
        let (ptr, len) = (format_ident!("{}__ptr", id), format_ident!("{}__len", id));
        let pname = id.to_string();
        match &p.kind {
            Kind::Ref(t) => {
                lowered.push((ptr.clone(), quote!(*const #t)));
                lowered.push((len.clone(), quote!(u64)));
                abi.push(quote!(#ptr: *const #t, #len: u64));
                rebind.push(if mode == Mode::Checked {
                    quote! {
                        // SAFETY: the host lowers a view of `len` initialised elements, bound to
                        // the launching lane and not written by any work during this launch
                        // (sluice's ownership rules), to (`ptr`, `len`); a view is part of an
                        // allocation (never empty), so `ptr` is non-null and aligned even when
                        // `len` is 0.
                        let #id = unsafe { #dev::slice::launch_slice::<#t>(#ptr, #len) };
                    }
                } else {
                    quote! {
                        // SAFETY: the host lowers a view of `len` initialised elements, bound to
                        // the launching lane and not written by any work during this launch
                        // (sluice's ownership rules), to (`ptr`, `len`); an unchecked launch's
                        // caller vouches for any other pointer.
                        let #id = unsafe { #dev::slice::slice::<#t>(#ptr, #len) };
                    }
                });
                device_checks.push(quote_spanned!(t.span()=> #dev::abi::element::<#t>();));
                record.push((pname, b'r', t.clone()));
            }
            Kind::Mut(t, unchecked_slice) => {
                lowered.push((ptr.clone(), quote!(*mut #t)));
                lowered.push((len.clone(), quote!(u64)));
                abi.push(quote!(#ptr: *mut #t, #len: u64));
                rebind.push(if *unchecked_slice {
                    quote! {
                        // SAFETY: an unchecked kernel: the launch's caller vouched (`unsafe
                        // launch_unchecked`) that the threads' writes through this slice do not race.
                        let #id = unsafe { #dev::slice::slice_mut::<#t>(#ptr, #len) };
                    }
                } else {
                    quote! {
                        // SAFETY: as for `&[T]`, and the host hands this launch the only access to
                        // the view (a `&mut` borrow of it) for the launch's whole duration; this
                        // thread's `DeviceSliceMut` is the only one made from the parameter.
                        let #id = unsafe { #dev::slice::DeviceSliceMut::<#t>::from_raw_parts(#ptr, #len) };
                    }
                });
                if !*unchecked_slice {
                    device_checks.push(quote_spanned!(t.span()=> #dev::abi::element::<#t>();));
                }
                record.push((pname, b'm', t.clone()));
            }
            Kind::Matrix { elem: t, optional, shape } => {
                lowered.push((ptr.clone(), quote!(*mut #t)));
                lowered.push((len.clone(), quote!(u64)));
                abi.push(quote!(#ptr: *mut #t, #len: u64));
                let (rows, cols) = (&shape.rows, &shape.cols);
                let ld = match &shape.ld {
                    Some(ld) => quote!(::core::option::Option::Some(#ld)),
                    None => quote!(::core::option::Option::None::<usize>),
                };
                let made = quote_spanned! {shape.span=>
                    // SAFETY: `rows`, `cols` and `ld` are the launch's own parameters or literals
                    // (checked by `#[kernel]`), the same in every thread, and the tiling is the
                    // parameter's type: every thread splits the matrix alike. The slice is the
                    // launch's only access to its view (as for `DeviceSliceMut`).
                    unsafe { #dev::tile::__matrix_from_launch::<#t, _, _, _, _>(#id, #rows, #cols, #ld) }
                };
                let fail = format!(
                    "kernel parameter `{pname}`: its #[matrix] shape does not fit the view: the view is shorter than \
                     (rows - 1) * ld + cols elements, ld is less than cols, or a dimension is negative or above u32::MAX"
                );
                let made = if *optional {
                    made
                } else {
                    quote_spanned! {shape.span=>
                        match #made {
                            ::core::option::Option::Some(__sluice_matrix) => __sluice_matrix,
                            ::core::option::Option::None => #dev::dfail!(#fail),
                        }
                    }
                };
                rebind.push(quote! {
                    // SAFETY: as for `DeviceSliceMut<T>`: the host hands this launch the only
                    // access to the view for the launch's whole duration; this thread makes one
                    // slice of the parameter, and one matrix of it.
                    let #id = unsafe { #dev::slice::DeviceSliceMut::<#t>::from_raw_parts(#ptr, #len) };
                    let #id = #made;
                });
                device_checks.push(quote_spanned!(t.span()=> #dev::abi::element::<#t>();));
                record.push((pname, b'm', t.clone()));
            }
            Kind::Atomic(t) => {
                let value: Type = syn::parse_quote!(<#t as #dev::atomic::AtomicElement>::Value);
                lowered.push((ptr.clone(), quote!(*mut #value)));
                lowered.push((len.clone(), quote!(u64)));
                abi.push(quote!(#ptr: *mut #value, #len: u64));
                rebind.push(quote! {
                    // SAFETY: the host lowers a view of `len` elements of the atomic's plain
                    // type, bound to the launching lane, to (`ptr`, `len`), and hands this launch
                    // the only access to it (a `&mut` borrow); the kernel reaches it only through
                    // this slice of atomics.
                    let #id = unsafe { #dev::slice::atomics::<#t>(#ptr, #len) };
                });
                device_checks.push(quote_spanned!(t.span()=> #dev::abi::element::<#value>();));
                // On the wire and to the host, a mutable slice of the plain type.
                record.push((pname, b'm', value));
            }
            Kind::Tma(tma) => {
                let TmaParam { ty, elem, rows, cols } = &**tma;
                let param_ty = quote!(#dev::tma::__TmaParam);
                let index = lowered.len();
                lowered.push((id.clone(), param_ty.clone()));
                abi.push(quote!(#id: #param_ty));
                // The tensor map's address in parameter memory, named as LLVM names the
                // entry's parameters (`<kernel>_param_<index>`): read in place, as the TMA
                // copies need (a copy in local memory would not do).
                let load = format!("mov.b64 {{a}}, {}_param_{index};", name);
                rebind.push(quote_spanned! {ty.span()=>
                    #[cfg(target_arch = "nvptx64")]
                    let #id: #dev::tma::TmaMatrix<#elem, #rows, #cols> = {
                        let _ = #id;
                        let addr: u64;
                        // SAFETY: reads the address of this entry's own parameter (no memory
                        // access): `mov` of the parameter's symbol, `cvta.param` to generic.
                        unsafe {
                            ::core::arch::asm!(#load, "cvta.param.u64 {a}, {a};", a = out(reg64) addr, options(pure, nomem, nostack));
                        }
                        // SAFETY: the launch's own tensor-map parameter, which the host made for
                        // this launch from a view bound to the launching lane.
                        unsafe { #dev::tma::TmaMatrix::<#elem, #rows, #cols>::__from_launch(addr) }
                    };
                    // SAFETY: the launch's own tensor-map parameter: on the CPU backend, the
                    // host's description of a view bound to the launching lane.
                    #[cfg(not(target_arch = "nvptx64"))]
                    let #id: #dev::tma::TmaMatrix<#elem, #rows, #cols> =
                        unsafe { #dev::tma::TmaMatrix::<#elem, #rows, #cols>::__from_launch(#id.words) };
                });
                device_checks.push(quote_spanned!(elem.span()=> #dev::abi::element::<#elem>();));
                record.push((pname, b't', elem.clone()));
                grid_constants.push(index);
            }
            Kind::Ptr(t, true) => {
                lowered.push((ptr.clone(), quote!(*const #t)));
                abi.push(quote!(#ptr: *const #t));
                rebind.push(quote! {
                    // SAFETY: an unchecked kernel: the launch's caller vouched that the view
                    // passed here holds at least one initialised `T`, not written meanwhile.
                    let #id: &#t = unsafe { &*#ptr };
                });
                record.push((pname, b'p', t.clone()));
            }
            Kind::Value(t) | Kind::ByValue(t) => {
                lowered.push((id.clone(), quote!(#t)));
                abi.push(quote!(#id: #t));
                if matches!(p.kind, Kind::Value(_)) {
                    device_checks.push(quote_spanned!(t.span()=> #dev::abi::value::<#t>();));
                }
                record.push((pname, b'v', t.clone()));
            }
            Kind::PtrMut(t) => {
                lowered.push((id.clone(), quote!(*mut #t)));
                abi.push(quote!(#id: *mut #t));
                record.push((pname, b'q', t.clone()));
            }
            Kind::Ptr(t, false) => {
                lowered.push((id.clone(), quote!(*const #t)));
                abi.push(quote!(#id: *const #t));
                record.push((pname, b'p', t.clone()));
            }
        }
    }
    let arg_names: Vec<&syn::Ident> = params.iter().map(|p| &p.ident).collect();
    let call = if sig.unsafety.is_some() {
        quote! {
            // SAFETY: an unchecked kernel (`unsafe fn`): it is launched only through the
            // `unsafe` `launch_unchecked`, whose caller vouched for the body's preconditions.
            unsafe { #inner_name(#(#arg_names),*) }
        }
    } else {
        quote!(#inner_name(#(#arg_names),*))
    };

    // Device: the record of the parameters' types, beside the entry in the PTX.
    let abi_static = format_ident!("__sluice_abi_{}", name);
    let name_lens: Vec<usize> = record.iter().map(|(n, _, _)| n.len()).collect();
    let record_len = quote!(#dev::abi::record_len(&[#(#name_lens),*]));
    let record_params = record.iter().map(|(n, k, t)| {
        let k = proc_macro2::Literal::u8_suffixed(*k);
        quote!(#dev::abi::Param { name: #n, kind: #k, size: ::core::mem::size_of::<#t>(), align: ::core::mem::align_of::<#t>() })
    });

    // Host: the descriptor.
    let host = quote!(#dev::__host);
    let sig_types: Vec<TokenStream2> = params
        .iter()
        .map(|p| match &p.kind {
            Kind::Ref(t) => quote_spanned!(t.span()=> #host::Ref<#t>),
            Kind::Mut(t, _) | Kind::Matrix { elem: t, .. } => quote_spanned!(t.span()=> #host::Mut<#t>),
            Kind::Tma(tma) => {
                let TmaParam { elem, rows, cols, .. } = &**tma;
                quote_spanned!(elem.span()=> #host::Tma<#elem, #rows, #cols>)
            }
            Kind::Atomic(t) => {
                quote_spanned!(t.span()=> #host::Mut<<#t as #dev::atomic::AtomicElement>::Value>)
            }
            Kind::Value(t) => quote!(#t),
            Kind::PtrMut(t) => quote_spanned!(t.span()=> #host::PtrMut<#t>),
            Kind::Ptr(t, _) => quote_spanned!(t.span()=> #host::Ptr<#t>),
            Kind::ByValue(t) => quote_spanned!(t.span()=> #host::ByValue<#t>),
        })
        .collect();
    let (kind, launch_with) = match mode {
        Mode::Checked => (quote!(#host::Checked), "`Stream::launch`"),
        Mode::Unchecked => (quote!(#host::Unchecked), "the `unsafe` `Stream::launch_unchecked` (an unchecked kernel)"),
    };
    let decl = format_ident!("__sluice_kernel_{}", name);
    let host_doc = format!(
        "Host declaration of the kernel `{kernel}` (generated by `#[kernel]`): its parameters are \
         `{}`. `sluice::include_kernels!` pairs it with the PTX this crate is compiled into, as the \
         handle `{kernel}` (re-exporting this type under the kernel's name, for `{kernel}::args`); \
         launch that with {launch_with}.",
        sig_types.iter().map(|t| t.to_string().replace(" ", "")).collect::<Vec<_>>().join(", ")
    );
    let name_lit = syn::LitStr::new(&kernel, Span::call_site());

    // Host: `<kernel>::args(..)`, the arguments by name. A wrong argument is then reported
    // against this kernel's own parameter (its name and its line in the kernel source).
    let arg_params: Vec<TokenStream2> = params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let id = &p.ident;
            match &p.kind {
                Kind::Value(t) | Kind::ByValue(t) => quote_spanned!(id.span()=> #id: #t),
                _ => {
                    let sig = &sig_types[i];
                    quote_spanned!(id.span()=> #id: impl #host::Arg<'lane, #sig>)
                }
            }
        })
        .collect();
    // Spanned at the kernel's name, so "defined here" notes point at the kernel's source.
    let args_ident = syn::Ident::new("args", name.span());
    // Host: `<kernel>::BLOCK`, the block a `#[kernel(block = ..)]` declares, for its launches.
    let block_const = block.map(|(x, y, z)| {
        let doc = format!(
            "The block every launch of `{kernel}` has (`#[kernel(block = ({x}, {y}, {z}))]`; another is refused): \
             `LaunchConfig {{ grid, block: kernels::{kernel}::BLOCK, shared_mem_bytes: 0 }}`."
        );
        quote! {
            #[doc = #doc]
            #vis const BLOCK: (u32, u32, u32) = (#x, #y, #z);
        }
    });
    let args_doc = format!(
        "The arguments of `{kernel}` by name, for `Stream::launch`: \
         `st.launch(&kernels::{kernel}, cfg, kernels::{kernel}::args({}))`. A view must be bound to the \
         launching lane; a wrong argument is reported against the named parameter.",
        arg_names.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")
    );

    // The kernel's source lines, as `file!()`/`line!()` see them at its `fn` and its closing
    // brace: a fault the device records at a line in between names this kernel.
    let fn_span = sig.fn_token.span;
    let file = quote_spanned!(fn_span=> ::core::file!());
    let first_line = quote_spanned!(fn_span=> ::core::line!());
    let last_line = quote_spanned!(func.block.brace_token.span.close()=> ::core::line!());
    let body_fn = format_ident!("__sluice_cpu_body_{}", name);
    let entry_fn = format_ident!("__sluice_cpu_entry_{}", name);
    let lowered_names: Vec<&syn::Ident> = lowered.iter().map(|(n, _)| n).collect();
    let lowered_types: Vec<&TokenStream2> = lowered.iter().map(|(_, t)| t).collect();
    let lowered_index: Vec<usize> = (0..lowered.len()).collect();

    let too_large = format!(
        "kernel `{name}`: its parameters take more than {MAX_PARAM_BYTES} bytes, the most a kernel's \
         parameters may take (ptxas refuses more): pass a large value in device memory instead, as a \
         `&[T]` of one element"
    );
    let param_space = quote! {
        // Both builds: the lowered parameters fit CUDA's parameter space (each at its
        // alignment), so what runs on the CPU backend also assembles for the GPU.
        #(#cfgs)*
        const _: () = {
            let mut end = 0usize;
            #(
                end = end.next_multiple_of(::core::mem::align_of::<#lowered_types>())
                    + ::core::mem::size_of::<#lowered_types>();
            )*
            ::core::assert!(end <= #MAX_PARAM_BYTES, #too_large);
        };
    };

    // Device: what LLVM must know of the entry beyond its Rust signature (launch bounds,
    // parameters read in place), for the linker (`sluice-llbc`) to turn into
    // `!nvvm.annotations`.
    let mut nvvm = String::new();
    if let Some(n) = max_threads {
        nvvm.push_str(&format!("maxntid={n};"));
    }
    if let Some((x, y, z)) = block {
        nvvm.push_str(&format!("reqntidx={x};reqntidy={y};reqntidz={z};"));
    }
    for i in &grid_constants {
        nvvm.push_str(&format!("tma_param={i};"));
    }
    // A device-build byte string beside the entry, `__sluice_<what>_<name>`, read by the
    // linker (`nvvm`) or the host (`launch`).
    let record = |what: &str, text: &str| {
        let marker = format_ident!("__sluice_{}_{}", what, name);
        let bytes = syn::LitByteStr::new(text.as_bytes(), Span::call_site());
        let len = text.len();
        quote! {
            #[cfg(target_arch = "nvptx64")]
            #(#cfgs)*
            #[doc(hidden)]
            #[unsafe(no_mangle)]
            #[allow(non_upper_case_globals)]
            #vis static #marker: [u8; #len] = *#bytes;
        }
    };
    let nvvm_static = (!nvvm.is_empty()).then(|| record("nvvm", &nvvm));

    // `dims = 1` and `block = (x, y, z)`: the record the host reads to check every launch of
    // the entry (`__sluice_launch_<name>`: `dims=1;`, `block=X,Y,Z;`), and what each build does
    // with the promise — the device assumes it, the CPU backend checks it (where the host may
    // have no PTX to read).
    let mut promise = String::new();
    let (mut assume_launch, mut check_launch) = (Vec::new(), Vec::new());
    if one_d {
        promise.push_str("dims=1;");
        assume_launch.push(quote! {
            // SAFETY: the entry's `__sluice_launch_*` record says `dims=1;`, and the host
            // refuses every launch of such an entry whose grid or blocks are not 1-D
            // (`sluice_host`'s launch checks, on every path that launches: streams, captures,
            // recordings), so the launch is 1-D here.
            unsafe { #dev::thread::__assume_1d_launch() };
        });
        check_launch.push(quote! { #dev::slice::__check_1d_launch(); });
    }
    if let Some((x, y, z)) = block {
        promise.push_str(&format!("block={x},{y},{z};"));
        assume_launch.push(quote! {
            // SAFETY: the entry's `__sluice_launch_*` record says `block=X,Y,Z;`, and the host
            // refuses every launch of such an entry with another block (`sluice_host`'s launch
            // checks, on every path that launches), so every block is this one here.
            unsafe { #dev::thread::__assume_block(#x, #y, #z) };
        });
        check_launch.push(quote! { #dev::slice::__check_block(#x, #y, #z); });
    }
    // `block = (x, y, z)` and each `MatrixMut<T, ThreadTiles<.., TX, TY>>` parameter: the same
    // block, checked at compile time (else `partition()` fails every launch).
    let layout_checks: Vec<TokenStream2> = match block {
        Some((x, y, z)) => tilings
            .iter()
            .map(|l| {
                // Every token at the parameter's tiling type, so that the error points there.
                let at = l.span();
                let dev_here: TokenStream2 = dev
                    .clone()
                    .into_iter()
                    .map(|mut t| {
                        t.set_span(at);
                        t
                    })
                    .collect();
                quote_spanned! {at=>
                    #(#cfgs)*
                    const _: () = #dev_here::tile::__check_block_layout::<#l>(#x, #y, #z);
                }
            })
            .collect(),
        None => Vec::new(),
    };
    let launch_static = (!promise.is_empty()).then(|| record("launch", &promise));

    Ok(quote! {
        // The user's function, as written, compiled as an ordinary (safe) Rust function in
        // both builds; the entries below rebuild its parameters and call it.
        #inner

        #nvvm_static

        #launch_static

        #(#layout_checks)*

        #param_space

        #[cfg(target_arch = "nvptx64")]
        #(#cfgs)*
        #(#docs)*
        #[unsafe(no_mangle)]
        #[allow(non_snake_case)]
        #vis unsafe extern "ptx-kernel" fn #name(#(#abi),*) {
            // Links the device std, and with it the panic handler, even into a kernel crate
            // that names nothing else of it.
            #dev::__linked();
            #(#device_checks)*
            #(#assume_launch)*
            #(#rebind)*
            #call
        }

        // Device: what the host checks its declaration against when it loads the module
        // (`sluice_device::abi`): each parameter's kind and the size and alignment of its
        // element or value type, as this build compiled them.
        #[cfg(target_arch = "nvptx64")]
        #(#cfgs)*
        #[doc(hidden)]
        #[unsafe(no_mangle)]
        #[allow(non_upper_case_globals)]
        #vis static #abi_static: [u8; #record_len] = #dev::abi::encode::<{ #record_len }>(&[#(#record_params),*]);

        // Host: the same body, compiled for the CPU backend (`sluice_device::cpu`): the
        // device entry's parameters and rebinding, under a hidden name.
        #[cfg(not(target_arch = "nvptx64"))]
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        #[inline(always)]
        #vis unsafe fn #body_fn(#(#abi),*) {
            #(#check_launch)*
            #(#rebind)*
            #call
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_snake_case)]
        /// # Safety
        /// `params` holds one pointer per lowered parameter of the kernel, each to a value of
        /// that parameter's type, and the memory those values name keeps the duties of a GPU
        /// launch of the kernel (the host's `KernelOp` upholds both).
        #vis unsafe fn #entry_fn(
            params: *const *mut ::core::ffi::c_void,
            launch: &#host::CpuLaunch,
        ) -> #host::CpuResult {
            // The lowered values, shared by every thread of every block as a GPU launch's
            // parameter block is.
            #[allow(non_snake_case)]
            struct Lowered { #(#lowered_names: #lowered_types,)* }
            // SAFETY: the values are read by the threads of this launch, never written; the
            // memory their pointers name is shared under the kernel's own rules, as on the
            // device.
            unsafe impl ::core::marker::Sync for Lowered {}
            // SAFETY: the caller's contract: `params[i]` points to a value of the i-th
            // lowered type (not necessarily at its alignment: a deferred launch keeps its
            // values in words).
            let lowered = unsafe { Lowered { #(#lowered_names: (*params.add(#lowered_index)).cast::<#lowered_types>().read_unaligned(),)* } };
            #dev::cpu::run(launch, &|| {
                // The whole parameter block, not its fields one by one (a closure would capture
                // each raw pointer alone, and those are not `Sync`).
                let lowered: &Lowered = &lowered;
                // SAFETY: each thread takes its own bitwise copy of the parameters, as each GPU
                // thread reads the parameter block; the entry's duties are the caller's.
                unsafe { #body_fn(#(::core::ptr::read(&lowered.#lowered_names)),*) }
            })
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #(#cfgs)*
        #(#docs)*
        #[doc = ""]
        #[doc = #host_doc]
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy)]
        // Named apart from the kernel, so that a module, a type or a re-export of the kernel's
        // name beside it does not collide; `include_kernels!` re-exports it under the
        // kernel's name, beside the `const` handle of the same name.
        #vis struct #decl {}

        // The kernel's name in the value namespace on the host too (on the device it is the
        // entry fn), so that `use crate::module::kernel;` of a kernel resolves in both builds
        // — also beside a module of the kernel's name, which lives in the type namespace.
        #[cfg(not(target_arch = "nvptx64"))]
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        #vis const #name: #decl = #decl {};

        #[cfg(not(target_arch = "nvptx64"))]
        #(#cfgs)*
        // SAFETY: generated from the kernel's own signature: the device entry's parameters are,
        // in order, exactly what `Signature` lowers to; the body is a safe function (checked
        // kernels), so it writes only through its `Mut` parameters and only in bounds; the
        // device build records each parameter's element type beside the entry, and the host
        // checks the record at load.
        unsafe impl #host::KernelDecl for #decl {
            const NAME: &'static str = #name_lit;
            type Signature = (#(#sig_types,)*);
            type Kind = #kind;
            const CPU: ::core::option::Option<#host::CpuEntry> = ::core::option::Option::Some(#entry_fn);
            const SOURCE: ::core::option::Option<(&'static str, u32, u32)> =
                ::core::option::Option::Some((#file, #first_line, #last_line));
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #(#cfgs)*
        impl #decl {
            #[doc = #args_doc]
            #[allow(clippy::too_many_arguments)]
            #[inline(always)]
            #vis fn #args_ident<'lane>(#(#arg_params),*) -> (#(impl #host::Arg<'lane, #sig_types>,)*) {
                (#(#arg_names,)*)
            }

            #block_const
        }
    })
}

/// The most bytes a kernel's parameters may take: the parameter space ptxas allows the PTX
/// the builder emits (`0x1100`).
const MAX_PARAM_BYTES: usize = 4352;

/// The first identifier `name` anywhere in `tokens` (groups included).
fn find_ident(tokens: TokenStream2, name: &str) -> Option<proc_macro2::Ident> {
    tokens.into_iter().find_map(|t| match t {
        proc_macro2::TokenTree::Ident(i) if i == name => Some(i),
        proc_macro2::TokenTree::Group(g) => find_ident(g.stream(), name),
        _ => None,
    })
}
