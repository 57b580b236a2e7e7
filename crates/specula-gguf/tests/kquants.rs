//! The K-quant decoders against the `gguf` Python package's dequantization of the same
//! seeded random blocks (tests/fixtures/kquants.json, written by
//! scripts/reference/kquant_fixture.py).

use serde::Deserialize;
use specula_gguf::TensorKind;
use specula_gguf::dequant::dequantize;

#[derive(Deserialize)]
struct Case {
    #[serde(rename = "type")]
    ty: String,
    bytes: String,
    values: Vec<f32>,
}

#[derive(Deserialize)]
struct Fixture {
    cases: Vec<Case>,
}

#[test]
fn q4_k_and_q6_k_blocks_decode_as_the_reference_does() {
    let fixture: Fixture =
        serde_json::from_str(include_str!("fixtures/kquants.json")).expect("the fixture");
    let mut seen = (0, 0);
    for case in &fixture.cases {
        let kind = match case.ty.as_str() {
            "Q4_K" => {
                seen.0 += 1;
                TensorKind::Q4K
            }
            "Q6_K" => {
                seen.1 += 1;
                TensorKind::Q6K
            }
            other => panic!("unexpected type {other}"),
        };
        let bytes: Vec<u8> = (0..case.bytes.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&case.bytes[i..i + 2], 16).expect("hex"))
            .collect();
        let ours = dequantize("block", kind, &bytes).expect("a whole block");
        assert_eq!(ours.len(), 256);
        for (i, (a, b)) in ours.iter().zip(&case.values).enumerate() {
            assert!(
                (a - b).abs() <= 1e-6 * b.abs().max(1.0),
                "{} weight {i}: {a} against {b}",
                case.ty
            );
        }
    }
    assert_eq!(seen, (3, 3));
}
