//! What the language front ends share: the bounded, whitespace-free text they parse, the call
//! shapes `f(e)`, `f<T>(e)` and `(T)e`, and their errors.

use super::Language;
use crate::request::RequestError;

/// Longest expression looked at (the longest legal one is under 60 bytes).
const MAX_LEN: usize = 256;

/// How much of the input an error repeats.
const ECHO_CHARS: usize = 80;

/// `expression` without ASCII whitespace, after checking its length and characters.
pub(super) fn compact(language: Language, expression: &str) -> Result<String, RequestError> {
    if expression.len() > MAX_LEN {
        return Err(RequestError::TooLong {
            len: expression.len(),
            max: MAX_LEN,
        });
    }
    if let Some((at, ch)) = expression
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_graphic() || c.is_ascii_whitespace()))
    {
        return Err(RequestError::BadCharacter {
            input: echo(expression),
            ch,
            at,
        });
    }
    let compact: String = expression
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    if compact.is_empty() {
        return Err(error(
            language,
            expression,
            format!(
                "nothing follows `{}:`: write a conversion, e.g. `{}`",
                language.prefix(),
                example(language)
            ),
        ));
    }
    Ok(compact)
}

/// An example of the language's spelling, for messages.
pub(super) fn example(language: Language) -> &'static str {
    match language {
        Language::Wgsl => "wgsl:vec4<i32>(vec4<f32>)",
        Language::Hlsl => "hlsl:int4(float4)",
        Language::Glsl => "glsl:ivec4(vec4)",
        Language::Msl => "msl:static_cast<int4>(float4)",
        Language::Rust => "rust:f32 as i8",
        Language::Wasm => "wasm:i32.trunc_sat_f32_s",
        Language::Ptx => "ptx:cvt.rni.s32.f32",
        Language::Cuda => "cuda:__float2int_rn",
    }
}

/// A front end's error: what `input` is not, and what to write.
pub(super) fn error(language: Language, input: &str, why: String) -> RequestError {
    RequestError::Language {
        language: language.to_string(),
        input: echo(input),
        why,
    }
}

/// `text` shortened for a message.
pub(super) fn echo(text: &str) -> String {
    let mut out: String = text.chars().take(ECHO_CHARS).collect();
    if text.chars().count() > ECHO_CHARS {
        out.push_str("...");
    }
    out
}

/// One call as written: `callee<template>(arg)`, or a cast `(template)arg` (callee empty).
#[derive(Debug)]
pub(super) struct Call<'a> {
    pub callee: &'a str,
    pub template: Option<&'a str>,
    pub arg: &'a str,
}

/// Reads `text` (whitespace removed) as one call.
pub(super) fn call<'a>(language: Language, text: &'a str) -> Result<Call<'a>, RequestError> {
    let bad = |why: &str| {
        error(
            language,
            text,
            format!("{why}: write e.g. `{}`", example(language)),
        )
    };
    if let Some(rest) = text.strip_prefix('(') {
        // A cast: `(T)e`.
        let close = matching(rest, b'(', b')').ok_or_else(|| bad("an unclosed `(`"))?;
        let (template, arg) = (&rest[..close], &rest[close + 1..]);
        if template.is_empty() || arg.is_empty() {
            return Err(bad("a cast names its type and then the operand's"));
        }
        return Ok(Call {
            callee: "",
            template: Some(template),
            arg,
        });
    }
    let ident = text
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    if ident == 0 {
        return Err(bad("expected a type or function name first"));
    }
    let (callee, mut rest) = text.split_at(ident);
    let mut template = None;
    if let Some(after) = rest.strip_prefix('<') {
        let close = matching(after, b'<', b'>').ok_or_else(|| bad("an unclosed `<`"))?;
        // `vec4<f32>(...)`: the template is part of the type; `bitcast<T>(...)`: the target.
        template = Some(&after[..close]);
        rest = &after[close + 1..];
    }
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| bad("expected the operand's type in parentheses after the name"))?;
    if inner.is_empty() {
        return Err(bad("the parentheses name the operand's type"));
    }
    Ok(Call {
        callee,
        template,
        arg: inner,
    })
}

/// The byte offset in `text` of the `close` that matches an `open` just before `text`.
fn matching(text: &str, open: u8, close: u8) -> Option<usize> {
    let mut depth = 1usize;
    for (i, b) in text.bytes().enumerate() {
        if b == open {
            depth += 1;
        } else if b == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// `name` as one of `scalars` followed by an optional component count in `widths`
/// (`int4`, `float16_t2`, `half`): the HLSL and Metal way of naming vectors.
pub(super) fn suffixed_type(
    name: &str,
    scalars: &[(&str, crate::types::ScalarType)],
    widths: &[usize],
) -> Option<crate::types::VectorType> {
    use crate::types::{VectorType, Width};
    // Longest names first: `int16_t` before `int`.
    let mut by_length: Vec<_> = scalars.iter().collect();
    by_length.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
    for &&(scalar, elem) in &by_length {
        if let Some(rest) = name.strip_prefix(scalar) {
            if rest.is_empty() {
                return Some(VectorType::scalar(elem));
            }
            let lanes: usize = rest.parse().ok().filter(|n| widths.contains(n))?;
            return Width::from_lanes(lanes).map(|w| VectorType::new(elem, w));
        }
    }
    None
}

/// The name `scalars` gives `t`, with its component count as a suffix (`int4`).
pub(super) fn suffixed_name(
    t: crate::types::VectorType,
    scalars: &[(&str, crate::types::ScalarType)],
) -> Option<String> {
    let (name, _) = scalars.iter().find(|(_, s)| *s == t.elem)?;
    Some(match t.width.lanes() {
        1 => name.to_string(),
        n => format!("{name}{n}"),
    })
}
