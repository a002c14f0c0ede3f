//! The fuzz targets' logic, shared by the libFuzzer harnesses in `fuzz/` (run with
//! `cargo +nightly fuzz run <target>`) and by the corpus replay in `tests/hostile.rs`, which
//! runs every checked-in seed through the same functions on stable Rust in CI.
//!
//! Each target takes arbitrary bytes and returns a [`Finding`] when a property fails; the
//! harnesses turn a finding into a panic, which is how libFuzzer records a crash. A panic
//! inside clconv is a finding too: libFuzzer catches it, and the replay test fails on it.
//!
//! ```
//! use clconv_verify::fuzz_targets::{parse_name, Differential};
//! assert!(parse_name(b"convert_uchar4_sat_rte(float4)").is_ok());
//! assert!(parse_name(b"\xff\x00 not even UTF-8").is_ok()); // nothing to check, no panic
//! let diff = Differential::new().unwrap();
//! assert!(diff.check(&[7, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]).is_ok());
//! ```

use clconv::buffer::bytes_per_vector;
use clconv::jit::{Jit, JitError, Tier, Tiering, X64Flags};
use clconv::languages::Language;
use clconv::reference;
use clconv::request::{Builtin, Request};
use clconv::types::{Extensions, Layout, Rounding};
use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

/// A property that failed: what, on which input.
///
/// ```
/// use clconv_verify::fuzz_targets::Finding;
/// let f = Finding("convert_int(float) printed as \"x\"".into());
/// assert_eq!(f.to_string(), "convert_int(float) printed as \"x\"");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding(pub String);

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Finding {}

/// Longest error message accepted: messages echo a bounded part of the input.
const MAX_MESSAGE: usize = 1024;

fn message_ok(input: &str, e: &dyn fmt::Display) -> Result<(), Finding> {
    let msg = e.to_string();
    // One line: no line break, even one the input itself holds (names may contain ASCII
    // whitespace; the fuzzer's first finding was a message repeating it raw).
    let multi_line = msg.contains(['\n', '\r']);
    if msg.is_empty() || msg.len() > MAX_MESSAGE || multi_line {
        return Err(Finding(format!(
            "error for {:?} is empty, multi-line or {} bytes long: {:?}",
            input.chars().take(100).collect::<String>(),
            msg.len(),
            msg.chars().take(200).collect::<String>()
        )));
    }
    Ok(())
}

/// The name parser: never panics, gives one bounded line per error, and whatever it accepts
/// prints back (`to_string()`, `mangled()`, the builtin alone) to text that parses to the same
/// request, with and without `cl_khr_fp16`. The same bytes go through every language's front
/// end as a bare expression ([`Language::parse`]): never a panic, one bounded line per error,
/// and only requests the language lists accepted.
///
/// `data` is taken as UTF-8 (the parser takes `&str`); other bytes have nothing to check.
///
/// ```
/// use clconv_verify::fuzz_targets::parse_name;
/// for name in ["_Z20convert_int4_sat_rteDv4_f", "as_int3 ( float4 )", "convert_int", "%%"] {
///     assert!(parse_name(name.as_bytes()).is_ok(), "{name}");
/// }
/// ```
pub fn parse_name(data: &[u8]) -> Result<(), Finding> {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    for ext in [Extensions::default(), Extensions::with_fp16()] {
        match Request::parse(text, ext) {
            Ok(r) => {
                // A language's names (`wgsl:f16(f32)`) do not depend on OpenCL's cl_khr_fp16,
                // so what they mean prints back to an OpenCL name read with it.
                let back_ext = if clconv::languages::split(text).is_some() {
                    Extensions::with_fp16()
                } else {
                    ext
                };
                for (how, printed) in [("to_string", r.to_string()), ("mangled", r.mangled())] {
                    match Request::parse(&printed, back_ext) {
                        Ok(back) if back == r => {}
                        other => {
                            return Err(Finding(format!(
                                "{text:?} parsed to {r:?}, whose {how}() {printed:?} parses to \
                                 {other:?}"
                            )))
                        }
                    }
                }
                let b = r.builtin();
                match Builtin::parse(&b.to_string(), back_ext) {
                    Ok(back) if back == b => {}
                    other => {
                        return Err(Finding(format!(
                            "the builtin of {text:?}, {b}, parses to {other:?}"
                        )))
                    }
                }
            }
            Err(e) => message_ok(text, &e)?,
        }
        match Builtin::parse(text, ext) {
            Ok(b) => match Builtin::parse(&b.to_string(), ext) {
                Ok(back) if back == b => {}
                other => {
                    return Err(Finding(format!(
                        "builtin {text:?} prints as {b}, which parses to {other:?}"
                    )))
                }
            },
            Err(e) => message_ok(text, &e)?,
        }
    }
    // Every language's own grammar, on the bare expression (what follows `LANG:`): an
    // expression a front end accepts means a request its language lists (`clconv list LANG:`
    // prints exactly the language's set, so a front end accepting more than its language is a
    // finding), and a refusal is one bounded line.
    for language in Language::ALL {
        match language.parse(text) {
            Ok(r) if listed(language).contains(&r) => {}
            Ok(r) => {
                return Err(Finding(format!(
                    "{}:{text:?} is accepted as {r}, which `clconv list {}:` does not list",
                    language.prefix(),
                    language.prefix()
                )))
            }
            Err(e) => message_ok(text, &e)?,
        }
    }
    Ok(())
}

/// The requests `language` lists ([`Language::spellings`]), computed once per process.
fn listed(language: Language) -> &'static HashSet<Request> {
    static LISTED: OnceLock<Vec<HashSet<Request>>> = OnceLock::new();
    let all = LISTED.get_or_init(|| {
        Language::ALL
            .into_iter()
            .map(|l| l.spellings().into_iter().map(|(_, r)| r).collect())
            .collect()
    });
    let index = Language::ALL.iter().position(|l| *l == language);
    &all[index.expect("Language::ALL holds every language")]
}

/// The differential target: a fuzzer-chosen request and input bytes, through the JIT and the
/// reference, in both layouts, from misaligned buffers, with guard bytes around the
/// destination.
///
/// Input format: bytes 0-1 (little-endian) pick a request of
/// `Request::every_named(Extensions::with_fp16())`, the trapping ones aside (modulo their
/// number: what `clconv list --fp16` prints, the languages' rules and the narrow formats
/// included); byte 2: bits 0-1 the static
/// rounding mode (rte, rtz, rtp, rtn), bits 2-5 the source's offset from a 16-byte boundary,
/// bit 6 the JIT tier (0: optimised, 1: quick; each kernel compiled for that tier only);
/// byte 3: bits 0-3 the destination's offset, bits 4-7 a number of stray bytes appended to the
/// source (when they make it ragged, both sides must refuse it alike and leave the destination
/// untouched); the rest, up to 4 KiB, is the source, cut to whole vectors.
///
/// ```
/// use clconv_verify::fuzz_targets::Differential;
/// let d = Differential::new().unwrap();
/// let index = d
///     .requests()
///     .iter()
///     .position(|r| r.to_string() == "convert_uchar4_sat_rte(float4)")
///     .unwrap() as u16;
/// let mut input = index.to_le_bytes().to_vec();
/// input.extend([0b0000_0100, 0x23]); // rte, source at offset 1, destination at 3, 2 stray bytes
/// input.extend([-5.0f32, 254.5, 254.6, 1.2e9].iter().flat_map(|x| x.to_le_bytes()));
/// d.check(&input).unwrap();
/// ```
pub struct Differential {
    jits: Vec<Jit>,
    requests: Vec<Request>,
}

/// Most source bytes one differential input converts.
const MAX_SOURCE: usize = 4096;

/// Guard bytes before and after the destination.
const GUARD: usize = 32;

impl Differential {
    /// Sets up one JIT per static rounding mode and tier, for this machine, with `half`.
    ///
    /// ```
    /// use clconv_verify::fuzz_targets::Differential;
    /// let d = Differential::new().unwrap();
    /// assert!(d.requests().len() > 30_000);
    /// assert!(d.requests().iter().any(|r| r.to_string() == "convert_tf32_rta(float)"));
    /// ```
    pub fn new() -> Result<Differential, JitError> {
        let ext = Extensions::with_fp16();
        let mut jits = Vec::new();
        for tier in [Tier::Optimised, Tier::Quick] {
            for mode in Rounding::ALL {
                let jit = Jit::with_options(X64Flags::Host, ext, mode)?;
                jit.set_tiering(Tiering::only(tier));
                jits.push(jit);
            }
        }
        // A trapping request's kernel stops at the first trap, which the comparison below does
        // not expect (the traps have their own test, `tests/traps.rs`).
        let requests = Request::every_named(ext)
            .into_iter()
            .filter(|r| !matches!(r, Request::Convert(c) if c.rules().traps()))
            .collect();
        Ok(Differential { jits, requests })
    }

    /// The requests an input's first two bytes index.
    ///
    /// ```
    /// use clconv_verify::fuzz_targets::Differential;
    /// let d = Differential::new().unwrap();
    /// assert_eq!(d.requests()[0].to_string(), "convert_char(char)");
    /// ```
    pub fn requests(&self) -> &[Request] {
        &self.requests
    }

    /// Runs one input (see [`Differential`] for the format). Inputs shorter than the 4-byte
    /// header check nothing.
    ///
    /// ```
    /// use clconv_verify::fuzz_targets::Differential;
    /// let d = Differential::new().unwrap();
    /// assert!(d.check(&[1, 2]).is_ok());
    /// assert!(d.check(&[0xff; 64]).is_ok());
    /// ```
    pub fn check(&self, data: &[u8]) -> Result<(), Finding> {
        let [i0, i1, control, offsets, payload @ ..] = data else {
            return Ok(());
        };
        let request =
            self.requests[usize::from(u16::from_le_bytes([*i0, *i1])) % self.requests.len()];
        let mode = Rounding::ALL[usize::from(control & 3)];
        let src_offset = usize::from(control >> 2 & 15);
        let dst_offset = usize::from(offsets & 15);
        let stray = usize::from(offsets >> 4);
        let tier = usize::from(control >> 6 & 1);
        let jit = &self.jits[usize::from(control & 3) + Rounding::ALL.len() * tier];
        let kernel = jit
            .compile_request(&request)
            .map_err(|e| Finding(format!("{request} does not compile: {e}")))?;
        let payload = &payload[..payload.len().min(MAX_SOURCE)];
        for layout in [Layout::Packed, Layout::Aligned] {
            let per_src = bytes_per_vector(request.src(), layout);
            let vectors = payload.len() / per_src;
            let whole = &payload[..vectors * per_src];
            let mut src_len = whole.len();
            // Stray bytes: a ragged source, unless they happen to complete a vector.
            let mut source_bytes = whole.to_vec();
            source_bytes.extend(payload.iter().cycle().take(stray.min(payload.len())));
            src_len += stray.min(payload.len());
            let src = Misaligned::new(&source_bytes, src_offset);
            let dst_len = vectors * bytes_per_vector(request.dst(), layout);
            let mut want = vec![0u8; dst_len];
            let reference =
                reference::evaluate_with_mode(&request, layout, mode, src.bytes(), &mut want);
            let mut dst = Misaligned::new(&vec![0x5au8; dst_len], dst_offset);
            let before = dst.raw.clone();
            let jit_result = kernel.run_bytes(layout, src.bytes(), dst.bytes_mut());
            let what = || {
                format!(
                    "{request} ({} layout, {mode:?}, {} tier, {src_len} source bytes)",
                    layout.name(),
                    kernel.tier().map_or("no", Tier::name)
                )
            };
            match (jit_result, reference) {
                (Ok(()), Ok(_)) => {
                    if dst.bytes() != want.as_slice() {
                        let at = dst
                            .bytes()
                            .iter()
                            .zip(&want)
                            .position(|(a, b)| a != b)
                            .unwrap_or(0);
                        return Err(Finding(format!(
                            "{}: JIT and reference differ from byte {at}: JIT {:02x?}, reference {:02x?}",
                            what(),
                            &dst.bytes()[at..(at + 8).min(dst_len)],
                            &want[at..(at + 8).min(dst_len)]
                        )));
                    }
                }
                (Err(JitError::Buffer(a)), Err(b)) if a == b => {
                    if dst.raw != before {
                        return Err(Finding(format!(
                            "{}: the call failed ({a}) but changed the destination",
                            what()
                        )));
                    }
                }
                (j, r) => {
                    return Err(Finding(format!(
                        "{}: JIT says {j:?}, reference says {r:?}",
                        what()
                    )))
                }
            }
            if !dst.guards_intact() {
                return Err(Finding(format!(
                    "{}: the JIT wrote outside the destination",
                    what()
                )));
            }
        }
        Ok(())
    }
}

/// A byte buffer placed `offset` bytes after a 16-byte boundary, between guard bytes.
struct Misaligned {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl Misaligned {
    fn new(bytes: &[u8], offset: usize) -> Misaligned {
        let mut raw = vec![0xa5u8; bytes.len() + 2 * GUARD + 16];
        let base = raw.as_ptr() as usize;
        // The first position at or after GUARD whose address is `offset` past a 16-byte boundary.
        let start = GUARD + (offset + 16 - (base + GUARD) % 16) % 16;
        raw[start..start + bytes.len()].copy_from_slice(bytes);
        Misaligned {
            raw,
            start,
            len: bytes.len(),
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }

    fn guards_intact(&self) -> bool {
        self.raw[..self.start]
            .iter()
            .chain(&self.raw[self.start + self.len..])
            .all(|&b| b == 0xa5)
    }
}
