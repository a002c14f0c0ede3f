//! The seed's Figure 4.2: `convert_uchar4_sat_rte((float4)(-5.0f, 254.5f, 254.6f, 1.2e9f))` is
//! `(uchar4)(0, 254, 255, 255)`: -5 saturates to 0, 254.5 is a tie that goes to even 254, 254.6
//! rounds to 255, 1.2e9 saturates to 255. The expected values are the spec's, by hand.

use clconv_embedder_example::Packer;

#[test]
fn figure_4_2_through_the_embedders_own_function() {
    let packer = Packer::new("convert_uchar4_sat_rte(float4)").unwrap();
    assert_eq!(packer.pack([-5.0, 254.5, 254.6, 1.2e9]), [0, 254, 255, 255]);
    // NaN -> 0 under _sat; ties to even on both sides of 0.5; the range edges.
    assert_eq!(packer.pack([f32::NAN, 0.5, 1.5, 255.49]), [0, 0, 2, 255]);
    assert_eq!(
        packer.pack([-0.0, -0.5, f32::INFINITY, 2.5]),
        [0, 0, 255, 2]
    );
}

#[test]
fn the_typed_entry_gives_the_same_function() {
    let packer = Packer::typed().unwrap();
    assert_eq!(packer.pack([-5.0, 254.5, 254.6, 1.2e9]), [0, 254, 255, 255]);
    assert_eq!(packer.pack([f32::NAN, 0.5, 1.5, 255.49]), [0, 0, 2, 255]);
}

#[test]
fn the_mangled_spelling_gives_the_same_function() {
    let packer = Packer::new("_Z22convert_uchar4_sat_rteDv4_f").unwrap();
    assert_eq!(packer.pack([-5.0, 254.5, 254.6, 1.2e9]), [0, 254, 255, 255]);
}

#[test]
fn a_bad_name_is_a_typed_error_not_a_panic() {
    let e = Packer::new("convert_uchar4_sat_rte(float3)").err().unwrap();
    assert!(e.to_string().contains("float3"), "{e}");
}
