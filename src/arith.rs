//! Correctly rounded arithmetic requests: `add`, `sub`, `mul`, `div`, `sqrt` and `fma` on `float`
//! or `double` (scalar or vector), each in a chosen IEEE-754 rounding mode, as
//! `#pragma OPENCL SELECT_ROUNDING_MODE` asks of every floating-point instruction in its region.
//!
//! # The spelling
//!
//! clconv's own (OpenCL C has operators, not named builtins, for these), shaped like a
//! conversion name:
//!
//! ```text
//! <op>[_rte|_rtz|_rtp|_rtn](<type>)
//!     op    add | sub | mul | div | sqrt | fma
//!     type  float | double, optionally with a width 2, 3, 4, 8, 16: float4, double2, ...
//! ```
//!
//! The one type in parentheses is the type of every operand and of the result: `mul_rtz(float4)`
//! multiplies two `float4` values rounding toward zero, `fma_rtn(double2)` computes
//! `a * b + c` with one rounding toward negative infinity, `sqrt_rtp(float)` takes one operand.
//! Without a mode (`add(float4)`) the request follows the static rounding mode of whoever runs
//! it (`SELECT_ROUNDING_MODE`, rte unless changed), like a conversion to a floating type without a
//! modifier.
//!
//! Operands are `a`, `b`, `c` in that order: `sub` is `a - b`, `div` is `a / b`, `fma` is
//! `a * b + c`. In a batch buffer each operand has its own buffer, laid out like a conversion's
//! source ([`Layout`]: a packed `float3` holds 3 elements per vector, an aligned one 4 with
//! the fourth ignored on input and written as zero on output).
//!
//! ```
//! use clconv::arith::{ArithOp, ArithRequest, FloatType};
//! use clconv::{Rounding, Width};
//! let r: ArithRequest = "fma_rtn(double2)".parse().unwrap();
//! assert_eq!(r.op(), ArithOp::Fma);
//! assert_eq!(r.elem(), FloatType::Double);
//! assert_eq!(r.width(), Width::W2);
//! assert_eq!(r.rounding(), Some(Rounding::Rtn));
//! assert_eq!(r.to_string(), "fma_rtn(double2)");
//! assert!("mul_rtz(int4)".parse::<ArithRequest>().is_err());
//! ```

use crate::types::{Layout, Rounding, ScalarType, VectorType, Width};
use std::fmt;
use std::str::FromStr;

/// One arithmetic operation.
///
/// ```
/// use clconv::arith::ArithOp;
/// assert_eq!(ArithOp::Fma.arity(), 3);
/// assert_eq!(ArithOp::from_name("sqrt"), Some(ArithOp::Sqrt));
/// assert_eq!(ArithOp::Div.to_string(), "div");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ArithOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b`.
    Div,
    /// The square root of `a`.
    Sqrt,
    /// `a * b + c` with one rounding.
    Fma,
}

impl ArithOp {
    /// The six operations.
    pub const ALL: [ArithOp; 6] = [
        ArithOp::Add,
        ArithOp::Sub,
        ArithOp::Mul,
        ArithOp::Div,
        ArithOp::Sqrt,
        ArithOp::Fma,
    ];

    /// `"add"`, `"sub"`, `"mul"`, `"div"`, `"sqrt"` or `"fma"`.
    pub const fn name(self) -> &'static str {
        match self {
            ArithOp::Add => "add",
            ArithOp::Sub => "sub",
            ArithOp::Mul => "mul",
            ArithOp::Div => "div",
            ArithOp::Sqrt => "sqrt",
            ArithOp::Fma => "fma",
        }
    }

    /// The operation named `name`, if any.
    pub fn from_name(name: &str) -> Option<ArithOp> {
        ArithOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The number of operands: 1 for sqrt, 3 for fma, 2 otherwise.
    pub const fn arity(self) -> usize {
        match self {
            ArithOp::Sqrt => 1,
            ArithOp::Fma => 3,
            _ => 2,
        }
    }
}

impl fmt::Display for ArithOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The element types arithmetic requests take: `float` and `double`.
///
/// ```
/// use clconv::arith::FloatType;
/// use clconv::ScalarType;
/// assert_eq!(FloatType::Double.scalar_type(), ScalarType::Double);
/// assert_eq!(FloatType::from_scalar(ScalarType::Int), None);
/// assert_eq!(FloatType::Float.precision(), 24);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FloatType {
    /// IEEE-754 binary32.
    Float,
    /// IEEE-754 binary64.
    Double,
}

impl FloatType {
    /// Both types, float first.
    pub const ALL: [FloatType; 2] = [FloatType::Float, FloatType::Double];

    /// The OpenCL scalar type.
    pub const fn scalar_type(self) -> ScalarType {
        match self {
            FloatType::Float => ScalarType::Float,
            FloatType::Double => ScalarType::Double,
        }
    }

    /// The type for an OpenCL scalar type, if it is `float` or `double`.
    pub const fn from_scalar(t: ScalarType) -> Option<FloatType> {
        match t {
            ScalarType::Float => Some(FloatType::Float),
            ScalarType::Double => Some(FloatType::Double),
            _ => None,
        }
    }

    /// `"float"` or `"double"`.
    pub const fn name(self) -> &'static str {
        self.scalar_type().name()
    }

    /// Width in bits: 32 or 64.
    pub const fn bits(self) -> u32 {
        self.scalar_type().bits()
    }

    /// Width in bytes: 4 or 8.
    pub const fn bytes(self) -> usize {
        self.scalar_type().bytes()
    }

    /// Significand bits including the implicit one: 24 or 53.
    pub const fn precision(self) -> u32 {
        match self {
            FloatType::Float => 24,
            FloatType::Double => 53,
        }
    }
}

impl fmt::Display for FloatType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated arithmetic request: an operation, an operand type, and a rounding mode as written
/// (`None`: the static mode).
///
/// ```
/// use clconv::arith::{ArithOp, ArithRequest, FloatType};
/// use clconv::{Rounding, Width};
/// let r = ArithRequest::new(ArithOp::Mul, FloatType::Float, Width::W4, Some(Rounding::Rtz));
/// assert_eq!(r.to_string(), "mul_rtz(float4)");
/// let plain = ArithRequest::new(ArithOp::Add, FloatType::Double, Width::W1, None);
/// assert_eq!(plain.to_string(), "add(double)");
/// assert_eq!(plain.effective_rounding(Rounding::Rtp), Rounding::Rtp);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArithRequest {
    op: ArithOp,
    elem: FloatType,
    width: Width,
    rounding: Option<Rounding>,
}

impl ArithRequest {
    /// The request; every combination is legal.
    pub const fn new(
        op: ArithOp,
        elem: FloatType,
        width: Width,
        rounding: Option<Rounding>,
    ) -> ArithRequest {
        ArithRequest {
            op,
            elem,
            width,
            rounding,
        }
    }

    /// Parses the spelling of the [module docs](self), e.g. `mul_rtz(float4)`.
    ///
    /// ```
    /// use clconv::arith::{ArithParseError, ArithRequest};
    /// assert!(ArithRequest::parse("sqrt_rtp(float)").is_ok());
    /// assert!(matches!(
    ///     ArithRequest::parse("mul_rtq(float4)"),
    ///     Err(ArithParseError::BadRounding { .. })
    /// ));
    /// ```
    pub fn parse(text: &str) -> Result<ArithRequest, ArithParseError> {
        parse(text)
    }

    /// True when `text` names an arithmetic request (well formed or not): its name part is one
    /// of the operations, alone or followed by `_`. Conversion names never are.
    ///
    /// ```
    /// use clconv::arith::ArithRequest;
    /// assert!(ArithRequest::is_arith_name("mul_rtz(float4)"));
    /// assert!(ArithRequest::is_arith_name("mul_rtq(int4)")); // arithmetic, but wrong
    /// assert!(!ArithRequest::is_arith_name("convert_int4_rte(float4)"));
    /// ```
    pub fn is_arith_name(text: &str) -> bool {
        let name = text.trim().split('(').next().unwrap_or("");
        let op = name.split('_').next().unwrap_or("");
        ArithOp::from_name(op).is_some()
    }

    /// The operation.
    pub const fn op(&self) -> ArithOp {
        self.op
    }

    /// The element type.
    pub const fn elem(&self) -> FloatType {
        self.elem
    }

    /// The vector width.
    pub const fn width(&self) -> Width {
        self.width
    }

    /// The type of every operand and of the result.
    pub const fn ty(&self) -> VectorType {
        VectorType::new(self.elem.scalar_type(), self.width)
    }

    /// The rounding mode as written (`None`: no modifier).
    pub const fn rounding(&self) -> Option<Rounding> {
        self.rounding
    }

    /// The mode that applies: as written, else `static_mode` (`SELECT_ROUNDING_MODE`).
    pub const fn effective_rounding(&self, static_mode: Rounding) -> Rounding {
        match self.rounding {
            Some(r) => r,
            None => static_mode,
        }
    }

    /// The same request with the mode written out: what it computes under `static_mode`.
    pub const fn resolved(&self, static_mode: Rounding) -> ArithRequest {
        ArithRequest {
            rounding: Some(self.effective_rounding(static_mode)),
            ..*self
        }
    }

    /// The name without the type: `mul_rtz`, `add`.
    pub fn function_name(&self) -> String {
        match self.rounding {
            Some(r) => format!("{}{}", self.op, r.suffix()),
            None => self.op.to_string(),
        }
    }

    /// Every request: 6 operations x 2 types x 6 widths x 5 rounding choices (360).
    pub fn all() -> Vec<ArithRequest> {
        let mut out = Vec::new();
        for op in ArithOp::ALL {
            for elem in FloatType::ALL {
                for width in Width::ALL {
                    for rounding in [None].into_iter().chain(Rounding::ALL.map(Some)) {
                        out.push(ArithRequest::new(op, elem, width, rounding));
                    }
                }
            }
        }
        out
    }

    /// Bytes one vector occupies in a buffer of `layout`.
    pub const fn bytes_per_vector(&self, layout: Layout) -> usize {
        layout.stride(self.width) * self.elem.bytes()
    }

    /// The number of vectors in a batch: one buffer per operand (`inputs` holds their lengths
    /// in bytes), each a whole number of vectors and all of one length, and a destination of
    /// the same length.
    ///
    /// ```
    /// use clconv::arith::ArithRequest;
    /// use clconv::Layout;
    /// let r = ArithRequest::parse("fma(float3)").unwrap();
    /// assert_eq!(r.vector_count(Layout::Packed, &[24, 24, 24], 24), Ok(2));
    /// assert_eq!(r.vector_count(Layout::Aligned, &[32, 32, 32], 32), Ok(2));
    /// assert!(r.vector_count(Layout::Packed, &[24, 24], 24).is_err()); // fma takes three
    /// assert!(r.vector_count(Layout::Packed, &[24, 12, 24], 24).is_err());
    /// ```
    pub fn vector_count(
        &self,
        layout: Layout,
        inputs: &[usize],
        dst_len: usize,
    ) -> Result<usize, ArithBufferError> {
        let expected = self.op.arity();
        if inputs.len() != expected {
            return Err(ArithBufferError::OperandCount {
                request: self.to_string(),
                expected,
                got: inputs.len(),
            });
        }
        let per_vector = self.bytes_per_vector(layout);
        let first = inputs[0];
        for (index, &bytes) in inputs.iter().enumerate() {
            if !bytes.is_multiple_of(per_vector) {
                return Err(ArithBufferError::Ragged {
                    buffer: operand_name(index),
                    bytes,
                    ty: self.ty(),
                    per_vector,
                    layout: layout.name(),
                });
            }
            if bytes != first {
                return Err(ArithBufferError::LengthMismatch {
                    buffer: operand_name(index),
                    bytes,
                    expected: first,
                });
            }
        }
        if dst_len != first {
            return Err(ArithBufferError::LengthMismatch {
                buffer: "destination",
                bytes: dst_len,
                expected: first,
            });
        }
        Ok(first / per_vector)
    }
}

/// `"a"`, `"b"` or `"c"`: the name of operand `index` in messages.
pub const fn operand_name(index: usize) -> &'static str {
    match index {
        0 => "operand a",
        1 => "operand b",
        _ => "operand c",
    }
}

impl fmt::Display for ArithRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.function_name(), self.ty())
    }
}

impl FromStr for ArithRequest {
    type Err = ArithParseError;

    fn from_str(s: &str) -> Result<ArithRequest, ArithParseError> {
        ArithRequest::parse(s)
    }
}

/// Why a name is not an arithmetic request. Every message says how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArithParseError {
    /// The name was empty.
    #[error("empty request: write e.g. `mul_rtz(float4)`, `fma_rtn(double2)` or `sqrt(float)`")]
    Empty,
    /// Malformed text around the name: no `(type)`, an unclosed `(`, text after the `)`.
    #[error("cannot parse {input:?}: {why}")]
    Syntax {
        /// The input, shortened when long.
        input: String,
        /// What is wrong and what to write instead.
        why: String,
    },
    /// The name is not one of the operations.
    #[error("unknown operation `{op}` in {input:?}: the operations are add, sub, mul, div, sqrt and fma")]
    UnknownOperation {
        /// The operation as written.
        op: String,
        /// The input, shortened when long.
        input: String,
    },
    /// A suffix other than `_rte`, `_rtz`, `_rtp`, `_rtn`.
    #[error("bad rounding mode `{modifier}` in {input:?}: write one of _rte, _rtz, _rtp, _rtn, or none for the static mode")]
    BadRounding {
        /// The suffix as written.
        modifier: String,
        /// The input, shortened when long.
        input: String,
    },
    /// The type is not float or double (or a vector of them) with a legal width.
    #[error("`{ty}` is not an operand type in {input:?}: arithmetic takes float or double, scalar or with a width of 2, 3, 4, 8 or 16 (float4, double2, ...)")]
    BadType {
        /// The type as written.
        ty: String,
        /// The input, shortened when long.
        input: String,
    },
}

/// Why a batch's buffers do not fit an arithmetic request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArithBufferError {
    /// The wrong number of operand buffers.
    #[error("{request} takes {expected} operand buffer(s), but {got} were passed")]
    OperandCount {
        /// The request.
        request: String,
        /// The operation's arity.
        expected: usize,
        /// Buffers passed.
        got: usize,
    },
    /// A buffer that is not a whole number of vectors.
    #[error("{buffer} is {bytes} bytes, not a whole number of {ty} vectors ({per_vector} bytes each in the {layout} layout)")]
    Ragged {
        /// Which buffer.
        buffer: &'static str,
        /// Its length in bytes.
        bytes: usize,
        /// The vector type.
        ty: VectorType,
        /// Bytes per vector.
        per_vector: usize,
        /// The layout's name.
        layout: &'static str,
    },
    /// Buffers of different lengths.
    #[error("{buffer} is {bytes} bytes, but operand a is {expected}: every operand and the destination hold the same number of vectors")]
    LengthMismatch {
        /// Which buffer.
        buffer: &'static str,
        /// Its length in bytes.
        bytes: usize,
        /// Operand a's length.
        expected: usize,
    },
    /// A typed buffer of the wrong element type.
    #[error("{buffer} holds {got} elements, but {request} works on {expected}")]
    ElementType {
        /// Which buffer.
        buffer: &'static str,
        /// What it holds.
        got: &'static str,
        /// What the request needs.
        expected: &'static str,
        /// The request.
        request: String,
    },
}

const MAX_NAME: usize = 64;

fn shorten(s: &str) -> String {
    if s.len() <= MAX_NAME {
        s.to_string()
    } else {
        let mut end = MAX_NAME;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    }
}

fn parse(text: &str) -> Result<ArithRequest, ArithParseError> {
    let input = text.trim();
    if input.is_empty() {
        return Err(ArithParseError::Empty);
    }
    let syntax = |why: &str| ArithParseError::Syntax {
        input: shorten(input),
        why: why.to_string(),
    };
    let Some(open) = input.find('(') else {
        return Err(syntax(
            "no operand type: write it in parentheses, e.g. `mul_rtz(float4)`",
        ));
    };
    let Some(inner) = input[open + 1..].strip_suffix(')') else {
        return Err(syntax(
            "expected one `)` at the end, after the operand type: e.g. `mul_rtz(float4)`",
        ));
    };
    if inner.contains('(') || inner.contains(')') {
        return Err(syntax("expected one type in parentheses, e.g. `(float4)`"));
    }
    let name = &input[..open];
    let (op_text, modifier) = match name.split_once('_') {
        Some((op, m)) => (op, Some(m)),
        None => (name, None),
    };
    let op = ArithOp::from_name(op_text).ok_or_else(|| ArithParseError::UnknownOperation {
        op: shorten(op_text),
        input: shorten(input),
    })?;
    let rounding = match modifier {
        None => None,
        Some(m) => Some(
            Rounding::from_name(m).ok_or_else(|| ArithParseError::BadRounding {
                modifier: shorten(&format!("_{m}")),
                input: shorten(input),
            })?,
        ),
    };
    let ty_text = inner.trim();
    let bad_type = || ArithParseError::BadType {
        ty: shorten(ty_text),
        input: shorten(input),
    };
    let digits = ty_text.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let base = &ty_text[..ty_text.len() - digits.len()];
    let elem = ScalarType::from_name(base)
        .and_then(FloatType::from_scalar)
        .ok_or_else(bad_type)?;
    let width = if digits.is_empty() {
        Width::W1
    } else {
        match digits.parse::<usize>() {
            Ok(lanes) if lanes != 1 && !digits.starts_with('0') => {
                Width::from_lanes(lanes).ok_or_else(bad_type)?
            }
            _ => return Err(bad_type()),
        }
    };
    Ok(ArithRequest::new(op, elem, width, rounding))
}
