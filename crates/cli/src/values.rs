//! Input values as text (`--values`, the demo's inputs) and results printed as text.

use crate::{shown, Usage};
use clconv::{reference, Extensions, Rounding, ScalarType};

/// Parses comma-separated numbers (or 0x bit patterns) into raw elements of type `t`.
pub fn parse_values(text: &str, t: ScalarType) -> Result<Vec<u8>, Usage> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let bits = parse_value(item, t).ok_or_else(|| {
            Usage(format!(
                "{} is not a {t} value (write {}, or 0x followed by the bit pattern)",
                shown(item),
                if t == ScalarType::Bool {
                    "true, false, 1 or 0"
                } else {
                    "a number"
                }
            ))
        })?;
        out.extend_from_slice(&bits.to_le_bytes()[..t.bytes()]);
    }
    Ok(out)
}

fn parse_value(item: &str, t: ScalarType) -> Option<u64> {
    let mask = if t.bits() == 64 {
        u64::MAX
    } else {
        (1u64 << t.bits()) - 1
    };
    if let Some(hex) = item.strip_prefix("0x").or_else(|| item.strip_prefix("0X")) {
        let v = u64::from_str_radix(hex, 16).ok()?;
        return (v & !mask == 0).then_some(v);
    }
    match t {
        // A bool is a byte: 0 false, 1 true (any other byte given in hex reads as true too).
        ScalarType::Bool => match item {
            "true" | "1" => Some(1),
            "false" | "0" => Some(0),
            _ => None,
        },
        ScalarType::Float => item.parse::<f32>().ok().map(|f| f.to_bits() as u64),
        ScalarType::Double => item.parse::<f64>().ok().map(f64::to_bits),
        t if t.is_small_float() || t.is_narrow() => {
            // Decimal -> double (Rust's parser rounds correctly), then the reference's exact
            // double -> half (bfloat, fp8) rounding: one rounding would be better, but inputs
            // given in decimal are rarely halfway cases; use 0x bit patterns for exact values.
            let d = item.parse::<f64>().ok()?;
            let c = clconv::Conversion::new(
                clconv::VectorType::scalar(ScalarType::Double),
                clconv::VectorType::scalar(t),
                false,
                Some(Rounding::Rte),
                Extensions::with_fp16(),
            )
            .ok()?;
            Some(reference::convert_element(&c, Rounding::Rte, d.to_bits()).bits)
        }
        _ => {
            let v: i128 = item.parse().ok()?;
            let (lo, hi) = (t.int_min()?, t.int_max()?);
            (lo..=hi).contains(&v).then_some(v as u64 & mask)
        }
    }
}

pub fn format_vector(bytes: &[u8], t: ScalarType, lanes: usize) -> String {
    let items: Vec<String> = (0..lanes)
        .map(|i| format_element(&bytes[i * t.bytes()..(i + 1) * t.bytes()], t))
        .collect();
    if lanes == 1 {
        items[0].clone()
    } else {
        format!("({})", items.join(", "))
    }
}

fn format_element(bytes: &[u8], t: ScalarType) -> String {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    let bits = u64::from_le_bytes(b);
    match t {
        ScalarType::Bool => (bits != 0).to_string(),
        ScalarType::Float => {
            let f = f32::from_bits(bits as u32);
            // Shortest round-trip text, except for large integers where it hides digits
            // (2^31 would print as 2147483600).
            if f.is_finite() && f.abs() >= 16777216.0 && f.abs() < 1.8e19 {
                format!("{:?}", f as f64)
            } else {
                format!("{f:?}")
            }
        }
        ScalarType::Double => format!("{:?}", f64::from_bits(bits)),
        t if t.is_small_float() || t.is_narrow() => {
            let c = clconv::Conversion::new(
                clconv::VectorType::scalar(t),
                clconv::VectorType::scalar(ScalarType::Double),
                false,
                None,
                Extensions::with_fp16(),
            )
            .expect("a small float -> double is legal with fp16");
            let d = reference::convert_element(&c, Rounding::Rte, bits).bits;
            format!("{:?}", f64::from_bits(d))
        }
        t if t.is_signed_integer() => {
            let shift = 64 - t.bits();
            format!("{}", ((bits << shift) as i64) >> shift)
        }
        _ => format!("{bits}"),
    }
}
