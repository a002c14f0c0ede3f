//! The typed conversion: one element conversion without a width, what a front end that holds
//! Cranelift values asks the builder API for ([`crate::lower::Lowering::convert`]). Part of the
//! model: it becomes a [`Conversion`] once the value's width is known.

use crate::conversion::{Conversion, RequestError};
use crate::rules::Rules;
use crate::types::{Extensions, Rounding, ScalarType, VectorType, Width};

/// One element conversion, without a width: what
/// [`Lowering::convert`](crate::lower::Lowering::convert) applies to every lane of a value.
/// The typed form of a name: `convert_int_sat_rte` is
/// `ElementConversion::new(Float, Int).saturating().rounding(Rounding::Rte)`.
///
/// ```
/// use clconv::lower::ElementConversion;
/// use clconv::{rules::Rules, Rounding, ScalarType::{Float, Int}, Width};
/// let c = ElementConversion::new(Float, Int).saturating().rounding(Rounding::Rte);
/// assert_eq!(c.at_width(Width::W4).unwrap().to_string(), "convert_int4_sat_rte(float4)");
/// let wgsl = ElementConversion::new(Float, Int).rules(Rules::WGSL);
/// assert_eq!(wgsl.at_width(Width::W1).unwrap().to_string(), "convert_int_satsrc(float)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ElementConversion {
    from: ScalarType,
    to: ScalarType,
    saturate: bool,
    rounding: Option<Rounding>,
    rules: Rules,
}

impl ElementConversion {
    /// `from` -> `to` with OpenCL's defaults: no `_sat`, the default rounding (toward zero into
    /// integers, the static mode into floats), OpenCL's rules.
    pub const fn new(from: ScalarType, to: ScalarType) -> ElementConversion {
        ElementConversion {
            from,
            to,
            saturate: false,
            rounding: None,
            rules: Rules::OPENCL,
        }
    }

    /// The element conversion of `conv` (its width dropped).
    pub const fn of(conv: &Conversion) -> ElementConversion {
        ElementConversion {
            from: conv.src().elem,
            to: conv.dst().elem,
            saturate: conv.saturate(),
            rounding: conv.rounding(),
            rules: conv.rules(),
        }
    }

    /// Saturating (`_sat`): integer destinations only.
    pub const fn saturating(mut self) -> ElementConversion {
        self.saturate = true;
        self
    }

    /// Rounding by `mode` instead of the default.
    pub const fn rounding(mut self, mode: Rounding) -> ElementConversion {
        self.rounding = Some(mode);
        self
    }

    /// Following `rules` (a language's, [`crate::rules`]) at the edges.
    pub const fn rules(mut self, rules: Rules) -> ElementConversion {
        self.rules = rules;
        self
    }

    /// The source element type.
    pub const fn from(&self) -> ScalarType {
        self.from
    }

    /// The destination element type.
    pub const fn to(&self) -> ScalarType {
        self.to
    }

    /// The rules at the edges.
    pub(crate) const fn applied_rules(&self) -> Rules {
        self.rules
    }

    /// The conversion on `width` components (an error for `_sat` into a float).
    pub fn at_width(&self, width: Width) -> Result<Conversion, RequestError> {
        Conversion::new(
            VectorType::new(self.from, width),
            VectorType::new(self.to, width),
            self.saturate,
            self.rounding,
            Extensions::with_fp16(),
        )
        .map(|c| c.with_rules(self.rules))
    }
}
