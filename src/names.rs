//! Names: the OpenCL spelling (`convert_uchar4_sat_rte(float4)`, `as_float4(int4)`), the
//! destination-only spelling (`convert_int4_sat_rte`), Itanium/SPIR mangled names
//! (`_Z20convert_int4_sat_rteDv4_f`) and the OpenCL C expressions chains print as
//! (`convert_double2_rte(uint4.lo)`), parsed into [`Request`]s and printed back. A
//! `language:` prefix hands the rest to that language's front end ([`crate::languages`]).
//!
//! This is the spelling layer: it builds requests of the model ([`crate::request`],
//! [`crate::chain`]) and nothing beneath imports it.
//!
//! # Grammar
//!
//! ```text
//! request  = opencl | mangled
//! opencl   = builtin ws* "(" ws* type ws* ")" ws*
//! builtin  = "convert_" type ["_sat" | "_satsrc" | "_satmsb" | "_satsrcmsb" | "_trap"]
//!            ["_ftz"] ["_clamp01" | "_relu" | "_nancanon"] ["_rte" | "_rtz" | "_rtp" | "_rtn"]
//!          | "as_" type
//! type     = ("char" | "uchar" | "short" | "ushort" | "int" | "uint" | "long" | "ulong"
//!             | "half" | "float" | "double") ["2" | "3" | "4" | "8" | "16"]
//! mangled  = "_Z" length builtin param        ; length = decimal byte count of builtin, no leading 0
//! param    = code | "Dv" ("2" | "3" | "4" | "8" | "16") "_" code
//! code     = "c" | "h" | "s" | "t" | "i" | "j" | "l" | "m" | "Dh" | "f" | "d"
//! ws       = ASCII whitespace
//! ```
//!
//! Whitespace is accepted only around the parentheses, because a name with a space in it is
//! more likely a mistake (`convert_int 4`) than a style.
//!
//! `as_<type>` has no mangled symbol in real binaries: clang implements it as a macro over
//! `__builtin_astype`, so no compiler emits `_Z9as_float4Dv4_i`. We still read and print that
//! spelling, mangled like any one-argument function, so that every [`Request`] has one and tools
//! can key tables by mangled name without a special case.
//!
//! # Robustness
//!
//! Every input is first checked for length (O(1), so a 10 MB string costs nothing) and then for
//! characters, so that all later steps work on ASCII and can slice at any byte offset. Errors
//! echo at most 80 characters of the input.

use crate::chain::{Chain, Fp4Packing, LaneMove, Step, MAX_STEPS};
use crate::request::{Builtin, Request, RequestError};
use crate::rules::{FloatResult, Rules};
use crate::types::{Extensions, Rounding, ScalarType, VectorType, Width};

/// Longest input looked at. The longest legal name is under 40 bytes; the rest is room for
/// whitespace inside the parentheses while keeping the work and the error messages bounded.
const MAX_LEN: usize = 256;

/// How much of the input an error message repeats.
const ECHO_CHARS: usize = 80;

impl Request {
    /// Parses any full spelling of a request: OpenCL (`convert_float_rtp(long)`) or mangled
    /// (`_Z16convert_uint_sath`).
    ///
    /// ASCII whitespace is allowed around the parentheses and the argument
    /// (`convert_int4 ( float4 )`), nowhere else. A name without its argument is
    /// [`RequestError::MissingSource`]; parse such a name with [`Builtin::parse`].
    ///
    /// ```
    /// use clconv::{Extensions, Request, RequestError};
    /// let ext = Extensions::default();
    /// let a = Request::parse("convert_uchar4_sat_rte(float4)", ext).unwrap();
    /// let b = Request::parse("_Z22convert_uchar4_sat_rteDv4_f", ext).unwrap();
    /// assert_eq!(a, b);
    /// assert_eq!(Request::parse("as_int3 ( float4 )", ext).unwrap().to_string(), "as_int3(float4)");
    /// assert!(matches!(
    ///     Request::parse("convert_int_rte_sat(float)", ext),
    ///     Err(RequestError::BadModifier { .. })
    /// ));
    /// assert!(matches!(
    ///     Request::parse("convert_int4", ext),
    ///     Err(RequestError::MissingSource { .. })
    /// ));
    /// ```
    pub fn parse(input: &str, ext: Extensions) -> Result<Request, RequestError> {
        // Length first, as below: a huge input costs nothing.
        if input.len() > MAX_LEN {
            return Err(RequestError::TooLong {
                len: input.len(),
                max: MAX_LEN,
            });
        }
        if let Some((language, expression)) = crate::languages::split(input) {
            return crate::languages::parse(language, expression);
        }
        // A chain is an expression: nested calls, a swizzle or a zero-filled vector literal.
        let literal = input.trim_ascii_start().starts_with('(') && input.contains(',');
        if input.contains('.') || literal || has_nested_call(input) {
            return parse_chain(input, ext).map(Request::Chain);
        }
        check_text(input)?;
        if input.starts_with("_Z") {
            parse_mangled(input, ext)
        } else {
            parse_opencl(input, ext)
        }
    }

    /// The Itanium/SPIR mangled name: `_Z20convert_int4_sat_rteDv4_f`.
    ///
    /// [`Request::parse`] reads it back to the same request.
    ///
    /// ```
    /// use clconv::{Extensions, Request};
    /// let ext = Extensions::with_fp16();
    /// let r = Request::parse("convert_uint_sat(uchar)", ext).unwrap();
    /// assert_eq!(r.mangled(), "_Z16convert_uint_sath");
    /// let h = Request::parse("convert_half4_rte(half4)", ext).unwrap();
    /// assert_eq!(h.mangled(), "_Z17convert_half4_rteDv4_Dh");
    /// assert_eq!(Request::parse(&h.mangled(), ext), Ok(h));
    /// ```
    pub fn mangled(&self) -> String {
        // A chain is no one builtin: it has no mangled name, and its OpenCL C spelling parses.
        if let Request::Chain(c) = self {
            return c.to_string();
        }
        let name = self.builtin().to_string();
        format!("_Z{}{}{}", name.len(), name, mangle_type(self.src()))
    }
}

impl Builtin {
    /// Parses a name without its argument: `convert_int4_sat_rte`, `as_float4`.
    ///
    /// Everything that does not need the source type is checked here: the type and width, the
    /// modifiers and their order, `_sat` on a floating destination, `half` without `cl_khr_fp16`.
    ///
    /// ```
    /// use clconv::{Builtin, Extensions, RequestError};
    /// let ext = Extensions::default();
    /// let b = Builtin::parse("convert_int4_sat_rte", ext).unwrap();
    /// assert_eq!(b.to_string(), "convert_int4_sat_rte");
    /// assert!(matches!(Builtin::parse("convert_float_sat", ext), Err(RequestError::SatOnFloat { .. })));
    /// assert!(matches!(Builtin::parse("as_half2", ext), Err(RequestError::HalfWithoutFp16 { .. })));
    /// assert!(Builtin::parse("as_half2", Extensions::with_fp16()).is_ok());
    /// ```
    pub fn parse(input: &str, ext: Extensions) -> Result<Builtin, RequestError> {
        check_text(input)?;
        if input.starts_with("_Z") {
            return Err(syntax(
                input,
                0,
                "a mangled name includes its source type: parse it with Request::parse".into(),
            ));
        }
        let end = ident_len(input);
        if end == 0 {
            return Err(no_name(input));
        }
        let builtin = parse_builtin(&input[..end], &Ctx::new(input, 0, ext))?;
        if let Some(c) = byte_at(input, end) {
            return Err(syntax(
                input,
                end,
                format!(
                    "expected the name alone, found `{c}`: Builtin::parse takes e.g. `{builtin}`; \
                     parse a name with its argument with Request::parse"
                ),
            ));
        }
        Ok(builtin)
    }
}

/// Where an error found inside a name points: the whole input to echo, and the name's offset in
/// it (non-zero for the name inside a mangled one).
struct Ctx<'a> {
    input: &'a str,
    base: usize,
    ext: Extensions,
}

impl<'a> Ctx<'a> {
    fn new(input: &'a str, base: usize, ext: Extensions) -> Ctx<'a> {
        Ctx { input, base, ext }
    }

    fn echo(&self) -> String {
        shorten(self.input)
    }
}

/// The checks every parser runs first. After them the input is non-empty ASCII of at most
/// `MAX_LEN` bytes, so byte offsets are char boundaries.
fn check_text(input: &str) -> Result<(), RequestError> {
    // Length before anything else: `len` is O(1), a scan of a huge string is not.
    if input.len() > MAX_LEN {
        return Err(RequestError::TooLong {
            len: input.len(),
            max: MAX_LEN,
        });
    }
    if input.trim_ascii().is_empty() {
        return Err(RequestError::Empty);
    }
    let allowed = |c: char| {
        c.is_ascii_alphanumeric() || c == '_' || c == '(' || c == ')' || c.is_ascii_whitespace()
    };
    if let Some((at, ch)) = input.char_indices().find(|&(_, c)| !allowed(c)) {
        return Err(RequestError::BadCharacter {
            input: shorten(input),
            ch,
            at,
        });
    }
    Ok(())
}

fn parse_opencl(input: &str, ext: Extensions) -> Result<Request, RequestError> {
    if crate::mx::MxRequest::is_mx_name(input) {
        // Echoed escaped and bounded, as every piece of input in a message (fuzzing found a
        // raw echo here: `fuzz/corpus/parse_name/finding-09-...`).
        return Err(RequestError::MxBlock {
            name: shorten(input.trim()),
        });
    }
    let name_end = ident_len(input);
    if name_end == 0 {
        return Err(no_name(input));
    }
    let name = &input[..name_end];
    if let Some(rewritten) = intel_bfloat16(input, name)? {
        return parse_opencl(&rewritten, ext);
    }
    let builtin = parse_builtin(name, &Ctx::new(input, 0, ext))?;
    // Only built for an error message: the happy path should not pay for it.
    let example = || example_request(builtin);

    let mut pos = skip_ws(input, name_end);
    match byte_at(input, pos) {
        None => {
            return Err(RequestError::MissingSource {
                input: shorten(name),
            })
        }
        Some('(') => pos += 1,
        Some(c) => {
            return Err(syntax(
                input,
                pos,
                format!(
                    "expected `(` after `{name}`, found `{c}`: the source type goes in \
                     parentheses, e.g. `{}`",
                    example()
                ),
            ))
        }
    }

    pos = skip_ws(input, pos);
    let arg_at = pos;
    let arg = &input[arg_at..arg_at + ident_len(&input[arg_at..])];
    if arg.is_empty() {
        return Err(match byte_at(input, pos) {
            Some(')') => RequestError::MissingSource {
                input: shorten(name),
            },
            None => syntax(
                input,
                pos,
                format!(
                    "unclosed `(`: write the source type and `)`, e.g. `{}`",
                    example()
                ),
            ),
            Some(c) => syntax(
                input,
                pos,
                format!(
                    "expected a source type after `(`, found `{c}`: e.g. `{}`",
                    example()
                ),
            ),
        });
    }
    let src = parse_type(arg, &Ctx::new(input, arg_at, ext))?;

    pos = skip_ws(input, arg_at + arg.len());
    match byte_at(input, pos) {
        Some(')') => pos += 1,
        None => {
            return Err(syntax(
                input,
                pos,
                format!("missing `)` after the source type `{arg}`: write `{name}({arg})`"),
            ))
        }
        Some(c) => {
            return Err(syntax(
                input,
                pos,
                format!(
                    "expected `)` after the source type `{arg}`, found `{c}`: the argument is \
                     one type, e.g. `{name}({arg})`"
                ),
            ))
        }
    }

    pos = skip_ws(input, pos);
    if let Some(c) = byte_at(input, pos) {
        return Err(syntax(
            input,
            pos,
            format!("unexpected `{c}` after the closing `)`: end the name at `{name}({arg})`"),
        ));
    }
    builtin.with_source(src, ext)
}

/// `cl_intel_bfloat16_conversions`' functions, as the clconv requests they are:
/// `intel_convert_bfloat16<n>_as_ushort<n>(float<n>)` is `convert_bfloat<n>_rte(float<n>)` ("the
/// only supported rounding mode is implicitly round-to-nearest-even"; the ushort holds the
/// bfloat16's bits, which is how clconv holds a bfloat), and
/// `intel_convert_as_bfloat16<n>_float<n>(ushort<n>)` is `convert_float<n>(bfloat<n>)`. Returns
/// the input rewritten into those spellings, or `None` for other names.
fn intel_bfloat16(input: &str, name: &str) -> Result<Option<String>, RequestError> {
    let Some(rest) = name.strip_prefix("intel_convert_") else {
        return Ok(None);
    };
    let unknown = || RequestError::BadModifier {
        modifier: shorten(name),
        input: shorten(input),
        why: "cl_intel_bfloat16_conversions has intel_convert_bfloat16_as_ushort(float) and \
              intel_convert_as_bfloat16_float(ushort), with the width after each type \
              (intel_convert_bfloat164_as_ushort4(float4))"
            .into(),
    };
    let width_then = |text: &str, tail: &str| -> Option<(String, String)> {
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        let (w, after) = text.split_at(digits);
        let w2 = after.strip_prefix(tail)?;
        (parse_width(w).is_some() && w == w2).then(|| (w.to_string(), w2.to_string()))
    };
    let args = &input[name.len()..];
    if let Some(text) = rest.strip_prefix("bfloat16") {
        let (w, _) = width_then(text, "_as_ushort").ok_or_else(unknown)?;
        let open = args.find('(').map_or(args.len(), |i| i + 1);
        if !args[open..].trim_start().starts_with("float") {
            return Err(RequestError::BadModifier {
                modifier: shorten(name),
                input: shorten(input),
                why: format!("intel_convert_bfloat16{w}_as_ushort{w} converts float{w}: write `{name}(float{w})`"),
            });
        }
        return Ok(Some(format!("convert_bfloat{w}_rte{args}")));
    }
    if let Some(text) = rest.strip_prefix("as_bfloat16") {
        let (w, _) = width_then(text, "_float").ok_or_else(unknown)?;
        let open = args.find('(').map_or(args.len(), |i| i + 1);
        let (head, arg) = args.split_at(open);
        let arg = arg.trim_start();
        let Some(after) = arg.strip_prefix("ushort") else {
            return Err(RequestError::BadModifier {
                modifier: shorten(name),
                input: shorten(input),
                why: format!(
                    "intel_convert_as_bfloat16{w}_float{w} takes the bfloat16 bits as \
                     ushort{w}: write `{name}(ushort{w})`"
                ),
            });
        };
        return Ok(Some(format!("convert_float{w}{head}bfloat{after}")));
    }
    Err(unknown())
}

/// The error for input that does not start with a name at all.
fn no_name(input: &str) -> RequestError {
    let c = byte_at(input, 0).unwrap_or(' ');
    let why = if c.is_ascii_whitespace() {
        "leading whitespace: remove it, the name comes first (`convert_int4(float4)`)".to_string()
    } else {
        format!("expected a name such as `convert_int4` or `as_float4` first, found `{c}`")
    };
    syntax(input, 0, why)
}

/// Parses `convert_<type>[_sat][_<rounding>]` or `as_<type>`. `name` holds only ASCII letters,
/// digits and `_`.
fn parse_builtin(name: &str, ctx: &Ctx) -> Result<Builtin, RequestError> {
    debug_assert!(is_ident(name));
    let (convert, prefix) = if name.starts_with("convert_") {
        (true, "convert_")
    } else if name.starts_with("as_") {
        (false, "as_")
    } else {
        return Err(RequestError::NotAConversion { input: ctx.echo() });
    };
    let body = &name[prefix.len()..];

    let mut type_end = body.bytes().take_while(u8::is_ascii_alphanumeric).count();
    if type_end == 0 {
        let example = if convert {
            "convert_int4(float4)"
        } else {
            "as_float4(int4)"
        };
        return Err(syntax(
            ctx.input,
            ctx.base + prefix.len(),
            format!("expected a type after `{prefix}`, e.g. `{example}`"),
        ));
    }
    // `size_t`, `uint8_t`: keep the `_t` with the type, so the error names the C type rather
    // than complaining about a `_t` modifier.
    type_end += c_type_suffix(&body[type_end..]);
    let dst = parse_type(&body[..type_end], ctx)?;
    let modifiers = &body[type_end..];

    if !convert {
        if !modifiers.is_empty() {
            return Err(RequestError::BadModifier {
                modifier: shorten(modifiers),
                input: ctx.echo(),
                why: format!(
                    "`as_` reinterprets bits and takes no modifiers: write `as_{dst}`; `_sat` and \
                     rounding modes belong to value conversions such as `convert_{dst}_sat`"
                ),
            });
        }
        check_half(dst, ctx.ext)?;
        return Ok(Builtin::Reinterpret { dst });
    }
    parse_modifiers(dst, modifiers, ctx)
}

/// One `_sat` or rounding modifier.
#[derive(Clone, Copy, PartialEq)]
enum Modifier {
    /// `_sat`, or `_satsrc` (clconv's spelling of WGSL's clamp, [`Rules::WGSL`]).
    Sat(Rules),
    /// A rounding mode; `true` for `_rta` (nearest, ties away from zero: `Rte` under
    /// [`Rules::ties_away`]).
    Round(Rounding, bool),
    /// `_ftz`, `_clamp01`, `_relu`, `_nancanon` (PTX's float rules).
    Float(FloatRule),
}

/// One of the float rules a name spells.
#[derive(Clone, Copy, PartialEq)]
enum FloatRule {
    Flush,
    Result(FloatResult),
}

impl FloatRule {
    fn token(self) -> &'static str {
        match self {
            FloatRule::Flush => "_ftz",
            FloatRule::Result(FloatResult::UnitInterval) => "_clamp01",
            FloatRule::Result(FloatResult::CanonicalNan) => "_nancanon",
            FloatRule::Result(FloatResult::Magnitude) => "_abs",
            FloatRule::Result(_) => "_relu",
        }
    }
}

/// Parses `[_sat][_<rounding>]` after the destination of a `convert_`. `text` is empty or
/// starts with `_`.
fn parse_modifiers(dst: VectorType, text: &str, ctx: &Ctx) -> Result<Builtin, RequestError> {
    let bad = |modifier: String, why: String| RequestError::BadModifier {
        modifier: shorten(&modifier),
        input: ctx.echo(),
        why: explain(why),
    };

    // Read all of them before judging the order, so that the suggested fix accounts for every
    // modifier written and `_sat` on a float is reported as that rather than as an order problem.
    let mut modifiers = Vec::new();
    if let Some(rest) = text.strip_prefix('_') {
        for token in rest.split('_') {
            let m = match token {
                "sat" => Modifier::Sat(Rules::OPENCL),
                "satsrc" => Modifier::Sat(Rules::WGSL),
                "trap" => Modifier::Sat(Rules::TRAPPING),
                "satmsb" => Modifier::Sat(Rules::HIGH_BIT_NAN),
                "satsrcmsb" => Modifier::Sat(Rules::FLOAT_TO_INTEGER[4]),
                "ftz" => Modifier::Float(FloatRule::Flush),
                "clamp01" => Modifier::Float(FloatRule::Result(FloatResult::UnitInterval)),
                "relu" => Modifier::Float(FloatRule::Result(FloatResult::Relu)),
                "nancanon" => Modifier::Float(FloatRule::Result(FloatResult::CanonicalNan)),
                "abs" => Modifier::Float(FloatRule::Result(FloatResult::Magnitude)),
                "rta" => Modifier::Round(Rounding::Rte, true),
                _ => match Rounding::from_name(token) {
                    Some(r) => Modifier::Round(r, false),
                    None => return Err(bad(format!("_{token}"), unknown_modifier(token, dst))),
                },
            };
            modifiers.push(m);
        }
    }

    check_half(dst, ctx.ext)?;
    let sat_rules = modifiers.iter().find_map(|m| match *m {
        Modifier::Sat(rules) => Some(rules),
        Modifier::Round(..) | Modifier::Float(_) => None,
    });
    let saturate = sat_rules.is_some();
    if saturate && dst.elem.is_float() && !dst.elem.is_beyond_opencl() {
        return Err(RequestError::SatOnFloat { dst });
    }
    let mut rules = sat_rules.unwrap_or(Rules::OPENCL);
    if dst.elem.is_float() && rules != Rules::OPENCL {
        return Err(RequestError::BadModifier {
            modifier: rules.modifier().unwrap_or("_sat").to_string(),
            input: ctx.echo(),
            why: format!(
                "{dst} is floating-point: it takes `_sat` (the largest finite value for what lies \
                 beyond it), not the float -> integer rules"
            ),
        });
    }
    // The float rules (PTX's `.ftz`, `.sat` into a float, `.relu`), each at most once.
    let mut seen_float = Vec::new();
    for m in &modifiers {
        if let Modifier::Float(rule) = *m {
            let token = rule.token();
            if seen_float.contains(&token) {
                return Err(bad(
                    token.into(),
                    format!("`{token}` is repeated: write it once"),
                ));
            }
            seen_float.push(token);
            match rule {
                FloatRule::Flush => rules.flush_float_subnormals = true,
                FloatRule::Result(_) if !dst.elem.is_float() => {
                    return Err(bad(
                        token.into(),
                        format!(
                            "`{token}` rules a floating-point result, and {dst} is an integer type"
                        ),
                    ));
                }
                FloatRule::Result(FloatResult::Magnitude)
                    if dst.elem != crate::types::ScalarType::Fp8E8M0 =>
                {
                    return Err(bad(
                        token.into(),
                        format!(
                            "`_abs` (the E8M0 of a float's magnitude, CUDA's and PTX's scale \
                             rule) rules conversions into fp8e8m0 only, not into {dst}"
                        ),
                    ));
                }
                FloatRule::Result(_) if rules.float_result != FloatResult::Rounded => {
                    return Err(bad(
                        token.into(),
                        "`_clamp01`, `_relu` and `_nancanon` each say what a float result becomes \
                         (the first two give the canonical NaN or +0.0 for NaN already): a \
                         conversion takes one"
                            .into(),
                    ));
                }
                FloatRule::Result(r) => rules.float_result = r,
            }
        }
    }
    let first_rounding = modifiers.iter().find_map(|m| match *m {
        Modifier::Round(r, away) => Some((r, away)),
        Modifier::Sat(_) | Modifier::Float(_) => None,
    });
    // `_rta`: PTX's `cvt.rna.tf32.f32`, the one conversion with ties away from zero.
    if let Some((_, true)) = first_rounding {
        if dst.elem != crate::types::ScalarType::Tf32 {
            return Err(bad(
                "_rta".into(),
                format!(
                    "`_rta` (round to nearest, ties away from zero) is PTX's `cvt.rna.tf32.f32`: \
                     clconv rounds that way into tf32 from float only, not into {dst}"
                ),
            ));
        }
        rules.ties_away = true;
    }
    let first_rounding = first_rounding.map(|(r, _)| r);
    let canonical = Builtin::Convert {
        dst,
        saturate,
        rounding: first_rounding,
        rules,
    };

    let mut seen_sat = false;
    let mut seen_rounding: Option<&str> = None;
    for m in modifiers {
        match m {
            Modifier::Sat(_) if seen_sat => {
                return Err(bad(
                    "_sat".into(),
                    format!("`_sat` is repeated: write it once, `{canonical}`"),
                ))
            }
            Modifier::Sat(_) => {
                if let Some(r) = seen_rounding {
                    return Err(bad(
                        "_sat".into(),
                        format!(
                            "`_sat` comes after `{r}`; write _sat before the rounding mode: \
                             `{canonical}`"
                        ),
                    ));
                }
                seen_sat = true;
            }
            Modifier::Float(rule) => {
                if let Some(r) = seen_rounding {
                    return Err(bad(
                        rule.token().into(),
                        format!(
                            "`{}` comes after `{r}`; write it before the rounding mode: \
                             `{canonical}`",
                            rule.token(),
                        ),
                    ));
                }
            }
            Modifier::Round(r, away) => {
                let token = if away { "_rta" } else { r.suffix() };
                match seen_rounding {
                    Some(prev) if prev == token => {
                        return Err(bad(
                            token.into(),
                            format!("`{token}` is repeated: write it once, `{canonical}`"),
                        ))
                    }
                    Some(prev) => {
                        let other = Builtin::Convert {
                            dst,
                            saturate,
                            rounding: Some(r),
                            rules: Rules {
                                ties_away: away,
                                ..rules
                            },
                        };
                        return Err(bad(
                            token.into(),
                            format!(
                                "a second rounding mode after `{prev}`: a conversion has one, \
                                 write `{canonical}` or `{other}`"
                            ),
                        ));
                    }
                    None => seen_rounding = Some(token),
                }
            }
        }
    }
    Ok(canonical)
}

/// Why `_<token>` is not a modifier, with the most likely fix.
fn unknown_modifier(token: &str, dst: VectorType) -> String {
    let lower = token.to_ascii_lowercase();
    if token.is_empty() {
        "an empty modifier (a doubled or trailing `_`): remove the extra `_`".into()
    } else if lower == "sat" || lower == "rta" || Rounding::from_name(&lower).is_some() {
        format!("modifiers are lowercase: write `_{lower}`")
    } else if token.bytes().all(|b| b.is_ascii_digit()) {
        format!("the vector width follows the type directly: write `convert_{dst}{token}`")
    } else if lower.starts_with("rt") {
        "unknown rounding mode: the modes are `_rte` (to nearest even), `_rtz` (toward zero), \
         `_rtp` (toward +inf) and `_rtn` (toward -inf); into tf32 from float also `_rta` (to \
         nearest, ties away from zero)"
            .into()
    } else {
        "unknown modifier: after the type come `_sat` (integer destinations only), then at most \
         one of `_rte`, `_rtz`, `_rtp`, `_rtn`"
            .into()
    }
}

/// Length of a C-style `_t` suffix (`_t`, `_t4`) at the start of `rest`, or 0.
fn c_type_suffix(rest: &str) -> usize {
    let Some(after) = rest.strip_prefix("_t") else {
        return 0;
    };
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let tail = &after[digits..];
    if tail.is_empty() || tail.starts_with('_') {
        2 + digits
    } else {
        0
    }
}

/// True when a `name(` follows the first `(`: a chain's nested call (`as_uint(convert_...(`),
/// not a stray parenthesis (`convert_int4((float4))`, which the OpenCL parser explains).
fn has_nested_call(input: &str) -> bool {
    let Some(open) = input.find('(') else {
        return false;
    };
    let inner = &input[open + 1..];
    inner.match_indices('(').any(|(i, _)| {
        inner[..i]
            .trim_end_matches(|c: char| c.is_ascii_whitespace())
            .ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// [`parse_type`] for a type inside `input` (a chain's operand or literal type).
pub(crate) fn parse_type_in(
    text: &str,
    input: &str,
    ext: Extensions,
) -> Result<VectorType, RequestError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(RequestError::Chain {
            chain: shorten(input),
            why: format!("expected a type, found `{}`", shorten(text)),
        });
    }
    parse_type(text, &Ctx::new(input, 0, ext))
}

/// Parses a type as written: `float`, `uchar4`. `text` is the whole token (letters, digits and
/// possibly `_`); anything but a known type followed by a legal width is an error.
fn parse_type(text: &str, ctx: &Ctx) -> Result<VectorType, RequestError> {
    // The small floats' names have digits: their width follows an `x` (`fp8e4m3x4`,
    // `fp8e4m3fnuzx4`). The longest name that begins the text is the type.
    if let Some(elem) = ScalarType::ALL
        .into_iter()
        .chain(ScalarType::NARROW)
        .filter(|t| t.name().contains(|c: char| c.is_ascii_digit()))
        .filter(|t| text.starts_with(t.name()))
        .max_by_key(|t| t.name().len())
    {
        let rest = &text[elem.name().len()..];
        let width = match rest.strip_prefix('x') {
            None if rest.is_empty() => Some(Width::W1),
            Some(digits) if !digits.is_empty() => parse_width(digits),
            _ => None,
        };
        return match width {
            Some(width) => Ok(VectorType::new(elem, width)),
            None => Err(RequestError::UnknownType {
                name: shorten(text),
                input: ctx.echo(),
                hint: format!(
                    "; `{elem}` vectors put the width after an `x`, since the name has a \
                     digit: `{elem}x2`, `{elem}x3`, `{elem}x4`, `{elem}x8` or `{elem}x16`"
                ),
            }),
        };
    }
    let letters = text.bytes().take_while(u8::is_ascii_alphabetic).count();
    let (elem_name, digits) = text.split_at(letters);
    let elem = match ScalarType::from_name(elem_name) {
        Some(elem) if digits.bytes().all(|b| b.is_ascii_digit()) => elem,
        _ => {
            return Err(RequestError::UnknownType {
                name: shorten(text),
                input: ctx.echo(),
                hint: type_hint(text),
            })
        }
    };
    match parse_width(digits) {
        Some(width) => Ok(VectorType::new(elem, width)),
        None => Err(RequestError::BadWidth {
            ty: elem,
            lanes: shorten(digits),
        }),
    }
}

/// The width spelled `digits` after a type: none for a scalar, else exactly 2, 3, 4, 8 or 16.
/// `1` and leading zeros are not OpenCL spellings.
fn parse_width(digits: &str) -> Option<Width> {
    match digits {
        "" => Some(Width::W1),
        "2" => Some(Width::W2),
        "3" => Some(Width::W3),
        "4" => Some(Width::W4),
        "8" => Some(Width::W8),
        "16" => Some(Width::W16),
        _ => None,
    }
}

/// Extra advice for an unknown type name, starting with "; " (or empty).
fn type_hint(name: &str) -> String {
    const NEVER: [&str; 5] = ["void", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t"];
    const C_FIXED: [(&str, ScalarType); 8] = [
        ("int8_t", ScalarType::Char),
        ("uint8_t", ScalarType::UChar),
        ("int16_t", ScalarType::Short),
        ("uint16_t", ScalarType::UShort),
        ("int32_t", ScalarType::Int),
        ("uint32_t", ScalarType::UInt),
        ("int64_t", ScalarType::Long),
        ("uint64_t", ScalarType::ULong),
    ];
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if NEVER.contains(&base) {
        return "; void, size_t, ptrdiff_t, intptr_t and uintptr_t are never convertible: \
                convert_ and as_ exist only for the sized types above, so cast to one of them first"
            .into();
    }
    if let Some((_, t)) = C_FIXED.iter().find(|(c, _)| *c == name) {
        return format!("; OpenCL spells `{name}` as `{t}`");
    }
    if base == "unsigned" || base == "signed" {
        return "; OpenCL spells the unsigned types uchar, ushort, uint and ulong, the signed ones \
                char, short, int and long"
            .into();
    }
    let lower = name.to_ascii_lowercase();
    let letters = lower.trim_end_matches(|c: char| c.is_ascii_digit());
    if lower != name && ScalarType::from_name(letters).is_some() {
        return format!("; type names are lowercase: write `{lower}`");
    }
    String::new()
}

fn parse_mangled(input: &str, ext: Extensions) -> Result<Request, RequestError> {
    // `why` often quotes a piece of the input: escape it like the input, so that the message
    // stays on one line.
    let bad = |why: String| RequestError::BadMangling {
        input: shorten(input),
        why: explain(why),
    };
    let after_z = &input[2..];
    let ndigits = after_z.bytes().take_while(u8::is_ascii_digit).count();
    if ndigits == 0 {
        return Err(bad(
            "expected the name's length in decimal after `_Z`, e.g. `_Z12convert_charf`".into(),
        ));
    }
    let digits = &after_z[..ndigits];
    let rest = &after_z[ndigits..];
    // Suggests the length that makes sense of the name, when one does.
    let length_fix = || match find_split(rest) {
        Some(k) => format!(
            "; the name here is `{}` ({k} bytes): write `_Z{k}{rest}`",
            &rest[..k]
        ),
        None => String::new(),
    };

    if digits.starts_with('0') {
        let what = if digits.bytes().all(|b| b == b'0') {
            "is zero, but a name has at least one byte"
        } else {
            "starts with 0, which Itanium mangling never writes"
        };
        return Err(bad(format!("the length `{digits}` {what}{}", length_fix())));
    }
    // Too many digits to parse is simply longer than the input.
    let len = digits.parse::<usize>().unwrap_or(usize::MAX);
    if len > rest.len() {
        return Err(bad(format!(
            "the length prefix says the name is {len} bytes, but only {} bytes follow{}",
            rest.len(),
            length_fix()
        )));
    }

    let (name, param) = rest.split_at(len);
    let src = match parse_param(param) {
        Ok(src) => src,
        // Most often the length is off, which cuts the parameter in the wrong place.
        Err(why) => {
            return Err(match find_split(rest).filter(|&k| k != len) {
                Some(_) => bad(format!(
                    "the length prefix {len} does not match the name{}",
                    length_fix()
                )),
                None => bad(format!("{why} (the name is `{name}`)")),
            })
        }
    };
    if !is_ident(name) {
        return Err(bad(format!(
            "the name `{name}` contains characters other than letters, digits and `_`"
        )));
    }
    let builtin = parse_builtin(name, &Ctx::new(input, 2 + ndigits, ext))?;
    builtin.with_source(src, ext)
}

/// Where the name ends in `rest` (the text after the length prefix) if that gives a valid name
/// and parameter: the fix for a wrong length prefix.
fn find_split(rest: &str) -> Option<usize> {
    let ext = Extensions::with_fp16();
    (1..rest.len()).find(|&k| {
        let (name, param) = rest.split_at(k);
        // The cheap filter first: a parameter is one or two bytes or starts with `Dv`.
        (param.len() <= 2 || param.starts_with("Dv"))
            && parse_param(param).is_ok()
            && is_ident(name)
            && parse_builtin(name, &Ctx::new(name, 0, ext)).is_ok()
    })
}

/// Parses the one parameter of a mangled conversion: `f`, `Dh`, `Dv4_f`. The error says what is
/// wrong, for [`RequestError::BadMangling`].
fn parse_param(text: &str) -> Result<VectorType, String> {
    const CODES: &str = "the codes are c (char), h (uchar), s (short), t (ushort), i (int), \
                         j (uint), l (long), m (ulong), Dh (half), f (float), d (double)";
    if text.is_empty() {
        return Err(format!(
            "missing the parameter type after the name: append the source type's code or \
             `Dv<n>_<code>` for a vector, e.g. `f` or `Dv4_f`; {CODES}"
        ));
    }
    let (ty, used) = if let Some(v) = text.strip_prefix("Dv") {
        let ndigits = v.bytes().take_while(u8::is_ascii_digit).count();
        let digits = &v[..ndigits];
        if digits.is_empty() {
            return Err("expected the number of components after `Dv`, e.g. `Dv4_f`".into());
        }
        let Some(width) = parse_width(digits).filter(|&w| w != Width::W1) else {
            let trimmed = digits.trim_start_matches('0');
            return Err(if digits == "1" {
                "`Dv1_`: a scalar parameter is mangled without `Dv`, e.g. `f`".into()
            } else if digits.starts_with('0') && parse_width(trimmed).is_some() {
                format!("`Dv{digits}_` has a leading zero: write `Dv{trimmed}_`")
            } else {
                format!(
                    "`Dv{}_`: OpenCL vectors have 2, 3, 4, 8 or 16 components",
                    shorten(digits)
                )
            });
        };
        let Some(code) = v[ndigits..].strip_prefix('_') else {
            return Err(format!(
                "expected `_` after `Dv{digits}`, e.g. `Dv{digits}_f`"
            ));
        };
        let (elem, n) = element_code(code)
            .ok_or_else(|| format!("{} after `Dv{digits}_`; {CODES}", bad_code(code)))?;
        (VectorType::new(elem, width), 2 + ndigits + 1 + n)
    } else {
        let (elem, n) = element_code(text).ok_or_else(|| format!("{}; {CODES}", bad_code(text)))?;
        (VectorType::scalar(elem), n)
    };
    let trailing = &text[used..];
    if !trailing.is_empty() {
        return Err(format!(
            "unexpected `{}` after the parameter type `{}`: a conversion takes exactly one argument",
            shorten(trailing),
            &text[..used]
        ));
    }
    Ok(ty)
}

/// The scalar type whose mangling code starts `text`, and the code's length.
fn element_code(text: &str) -> Option<(ScalarType, usize)> {
    ScalarType::ALL
        .into_iter()
        .chain(ScalarType::NARROW)
        .chain([ScalarType::Bool])
        .find(|t| text.starts_with(t.mangled_code()))
        .map(|t| (t, t.mangled_code().len()))
}

/// What the code at the start of `text` is, when it is not a conversion type.
fn bad_code(text: &str) -> String {
    let Some(c) = text.chars().next() else {
        return "missing the element type code".into();
    };
    match c {
        'v' => "`v` is void, which is never convertible".into(),
        'a' => "`a` is C's `signed char`; OpenCL's char is `c`".into(),
        'x' | 'y' => format!("`{c}` is C's long long; OpenCL's 64-bit integers are `l` and `m`"),
        'P' | 'R' | 'O' | 'K' | 'V' => {
            format!("`{c}` starts a pointer, reference or qualified type; conversions take a value")
        }
        'D' if text.starts_with("Dv") => "a vector of vectors is not a type".into(),
        _ => format!("unknown type code starting at `{}`", shorten(text)),
    }
}

/// The mangled parameter for `t`: `f`, `Dv4_f`.
fn mangle_type(t: VectorType) -> String {
    match t.width {
        Width::W1 => t.elem.mangled_code().to_string(),
        w => format!("Dv{}_{}", w.lanes(), t.elem.mangled_code()),
    }
}

/// A legal request for `builtin`, to show in messages: a source other than the destination's
/// element type, of the same width (convert_) or byte size (as_).
fn example_request(builtin: Builtin) -> String {
    let candidates = [
        ScalarType::Float,
        ScalarType::Int,
        ScalarType::UChar,
        ScalarType::Short,
        ScalarType::Long,
    ];
    candidates
        .into_iter()
        .filter(|&e| e != builtin.dst().elem)
        .find_map(|e| builtin.with_source_element(e, Extensions::with_fp16()).ok())
        .map_or_else(|| format!("{builtin}(<type>)"), |r| r.to_string())
}

fn check_half(t: VectorType, ext: Extensions) -> Result<(), RequestError> {
    if t.elem == ScalarType::Half && !ext.fp16 {
        Err(RequestError::HalfWithoutFp16 { ty: t })
    } else {
        Ok(())
    }
}

fn syntax(input: &str, at: usize, why: String) -> RequestError {
    RequestError::Syntax {
        input: shorten(input),
        at,
        // `why` may quote the offending character: keep the message on one line.
        why: explain(why),
    }
}

/// Bytes of the identifier (ASCII letters, digits, `_`) at the start of `text`.
fn ident_len(text: &str) -> usize {
    text.bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count()
}

fn is_ident(text: &str) -> bool {
    ident_len(text) == text.len()
}

fn skip_ws(text: &str, pos: usize) -> usize {
    pos + text[pos..]
        .bytes()
        .take_while(u8::is_ascii_whitespace)
        .count()
}

/// The character at byte `pos` of an ASCII `text`.
fn byte_at(text: &str, pos: usize) -> Option<char> {
    text.as_bytes().get(pos).map(|&b| char::from(b))
}

/// `text` with control characters escaped (`\n`), so an error message stays one readable line,
/// then cut to at most `ECHO_CHARS` characters, at a char boundary, marked with `...`.
/// Escaping first keeps the bound: a control character can take six characters escaped.
pub(crate) fn shorten(text: &str) -> String {
    let head: String = text.chars().take(ECHO_CHARS + 1).collect();
    clip(escape_controls(head), ECHO_CHARS)
}

/// `text` cut to at most `max` characters (the last three `...` when cut).
fn clip(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text,
        Some(_) => {
            let end = text
                .char_indices()
                .nth(max - 3)
                .map_or(text.len(), |(i, _)| i);
            format!("{}...", &text[..end])
        }
    }
}

/// The longest explanation (`why`) an error carries: it may quote a piece of the input.
const WHY_CHARS: usize = 600;

/// An explanation for an error message: one line, bounded.
fn explain(why: String) -> String {
    clip(escape_controls(why), WHY_CHARS)
}

/// `text` with control characters (line breaks, NUL, ...) written as escapes: error messages
/// are one line.
fn escape_controls(text: String) -> String {
    if text.chars().any(char::is_control) {
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect()
    } else {
        text
    }
}

/// Parses the OpenCL C expression a chain prints as ([`Chain`]'s `Display`): nested
/// `convert_`/`as_` calls around an operand type, swizzles `.lo`, `.hi`, `.s<digits>`, the
/// zero-filled literal `(T)(x, 0, ...)` and FP4's `pack_fp4(x)`/`unpack_fp4(x)`.
fn parse_chain(input: &str, ext: Extensions) -> Result<Chain, RequestError> {
    let allowed =
        |c: char| c.is_ascii_alphanumeric() || "_(),.".contains(c) || c.is_ascii_whitespace();
    if let Some((at, ch)) = input.char_indices().find(|&(_, c)| !allowed(c)) {
        return Err(RequestError::BadCharacter {
            input: shorten(input),
            ch,
            at,
        });
    }
    let mut steps = Vec::new();
    parse_expression(input, input, ext, &mut steps, 0)?;
    Chain::new(&steps)
}

/// Parses `text` (part of `input`), pushing its steps innermost first; gives its type.
fn parse_expression(
    text: &str,
    input: &str,
    ext: Extensions,
    steps: &mut Vec<Step>,
    depth: usize,
) -> Result<VectorType, RequestError> {
    let text = text.trim_ascii();
    // The explanation quotes pieces of the input (`.{s}`): escaped and bounded like it.
    let error = |why: String| RequestError::Chain {
        chain: shorten(input),
        why: explain(why),
    };
    // Deeper than any chain: stop before the stack cares.
    if depth > MAX_STEPS + 1 || steps.len() > MAX_STEPS {
        return Err(error(format!("a chain has at most {MAX_STEPS} steps")));
    }
    // `(T)(x, 0, 0)`: x placed into the wider T.
    if let Some(rest) = text.strip_prefix('(') {
        let close = rest
            .find(')')
            .ok_or_else(|| error("unclosed `(` around a type".into()))?;
        let ty = parse_type_in(rest[..close].trim_ascii(), input, ext)?;
        let args = rest[close + 1..].trim_ascii();
        let inside = args
            .strip_prefix('(')
            .and_then(|a| a.strip_suffix(')'))
            .ok_or_else(|| error(format!("after `({ty})` comes the literal's `(x, 0, ...)`")))?;
        let parts = split_top_level(inside);
        let inner = parse_expression(parts[0], input, ext, steps, depth + 1)?;
        if parts[1..].iter().any(|p| p.trim_ascii() != "0")
            || parts.len() - 1 + inner.lanes() != ty.lanes()
        {
            return Err(error(format!(
                "`({ty})({}, ...)` fills the lanes past {inner} with zeros: write `, 0` {} times",
                parts[0].trim_ascii(),
                ty.lanes().saturating_sub(inner.lanes())
            )));
        }
        steps.push(Step::Lanes(LaneMove::new(inner, 0, ty)?));
        return Ok(ty);
    }
    // `x.lo`: a swizzle after the last `)`.
    if let Some(dot) = text.rfind('.').filter(|&d| !text[d..].contains(')')) {
        let inner = parse_expression(&text[..dot], input, ext, steps, depth + 1)?;
        let swizzle = text[dot + 1..].trim_ascii();
        let (first, lanes) = match swizzle {
            "lo" => (0, inner.lanes() / 2),
            "hi" => (inner.lanes() / 2, inner.lanes() / 2),
            s => {
                let digits = s
                    .strip_prefix(['s', 'S'])
                    .filter(|d| !d.is_empty())
                    .ok_or_else(|| {
                        error(format!(
                            "`.{s}` is not a swizzle clconv reads: `.lo`, `.hi` or `.s` and consecutive lane digits (`.s23`)"
                        ))
                    })?;
                let lanes: Vec<u32> = digits.chars().filter_map(|c| c.to_digit(16)).collect();
                let consecutive =
                    lanes.len() == digits.len() && lanes.windows(2).all(|w| w[1] == w[0] + 1);
                if !consecutive {
                    return Err(error(format!(
                        "`.{s}` takes lanes that are not consecutive: a chain takes a run of lanes (`.s23`)"
                    )));
                }
                (lanes[0] as usize, lanes.len())
            }
        };
        let width = Width::from_lanes(lanes).ok_or_else(|| {
            error(format!(
                "`.{swizzle}` of {inner} takes {lanes} lanes, which is no OpenCL width"
            ))
        })?;
        let dst = VectorType::new(inner.elem, width);
        steps.push(Step::Lanes(LaneMove::new(inner, first, dst)?));
        return Ok(dst);
    }
    // `name(x)`: a conversion or reinterpretation.
    if let (Some(open), true) = (text.find('('), text.ends_with(')')) {
        let inner = parse_expression(
            &text[open + 1..text.len() - 1],
            input,
            ext,
            steps,
            depth + 1,
        )?;
        let name = text[..open].trim_ascii();
        if name == "pack_fp4" || name == "unpack_fp4" {
            let packing = if name == "pack_fp4" {
                Fp4Packing::pack(inner)?
            } else {
                Fp4Packing::unpack(inner)?
            };
            steps.push(Step::Fp4(packing));
            return Ok(packing.dst());
        }
        let builtin = Builtin::parse(name, ext)?;
        let step = match builtin.with_source(inner, ext)? {
            Request::Convert(c) => Step::Convert(c),
            Request::Reinterpret(r) => Step::Reinterpret(r),
            Request::Chain(_) => unreachable!("a builtin is one step"),
        };
        steps.push(step);
        return Ok(step.dst());
    }
    parse_type_in(text, input, ext)
}

/// `text` split at the commas outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}
