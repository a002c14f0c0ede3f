//! What a recipe converts: one element conversion as the recipes see it ([`BlockSpec`]) and the
//! conversion classes the tables name ([`Class`]). A leaf the class files share, so that none
//! of them depends on `recipes`, which depends on all of them.

use crate::rules::Rules;
use crate::types::{Rounding, ScalarType};

/// One element conversion as a recipe sees it: types, `_sat`, and the effective rounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockSpec {
    /// Source element type.
    pub src: ScalarType,
    /// Destination element type.
    pub dst: ScalarType,
    /// `_sat`.
    pub saturate: bool,
    /// The rounding that applies (static mode and defaults already resolved).
    pub rounding: Rounding,
    /// The rules at the edges. The recipes implement OpenCL's; the kernel and the builder API
    /// apply the others to what a recipe gives (`src/lower/edges.rs`), so the tables key
    /// rows without them.
    pub rules: Rules,
}

impl BlockSpec {
    /// The conversion class: `int_to_int`, `float_to_int`, `int_to_float`, `float_to_float`,
    /// `bool` (to or from bool), or `identity` (same source and destination type).
    pub fn class(&self) -> Class {
        if self.src == self.dst {
            return Class::Identity;
        }
        if self.src.is_bool() || self.dst.is_bool() {
            return Class::Bool;
        }
        match (self.src.is_float(), self.dst.is_float()) {
            (false, false) => Class::IntToInt,
            (true, false) => Class::FloatToInt,
            (false, true) => Class::IntToFloat,
            (true, true) => Class::FloatToFloat,
        }
    }

    /// Elements per vector block: 16 bytes of the narrower side.
    pub fn block_elements(&self) -> usize {
        16 / self.src.bytes().min(self.dst.bytes())
    }
}

/// A conversion class, as the tables name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// integer -> integer.
    IntToInt,
    /// float/half -> integer.
    FloatToInt,
    /// integer -> float/half.
    IntToFloat,
    /// float/half -> float/half.
    FloatToFloat,
    /// To or from bool.
    Bool,
    /// `convert_T(T)`: the bits unchanged.
    Identity,
    /// `as_*`.
    Reinterpret,
}

impl Class {
    /// Every class.
    pub const ALL: [Class; 7] = [
        Class::IntToInt,
        Class::FloatToInt,
        Class::IntToFloat,
        Class::FloatToFloat,
        Class::Bool,
        Class::Identity,
        Class::Reinterpret,
    ];

    /// The name in the tables.
    pub const fn name(self) -> &'static str {
        match self {
            Class::IntToInt => "int_to_int",
            Class::FloatToInt => "float_to_int",
            Class::IntToFloat => "int_to_float",
            Class::FloatToFloat => "float_to_float",
            Class::Bool => "bool",
            Class::Identity => "identity",
            Class::Reinterpret => "reinterpret",
        }
    }

    /// The class named `name`.
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }
}
